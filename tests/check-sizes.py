#!/usr/bin/env python3
# Sizes the project keeps (CONTRIBUTING, "Sizes"): every source file in
# engine/, app/ and ui/ under 1000 lines, every test file under 1500, and
# every C function under 200 lines.  Prints "file:line name length" for each
# offender and exits 1 when there is one.
#
#   check-sizes.py SOURCE_ROOT
#   check-sizes.py --self-test   the scan against a made-up tree
#
# Functions are found by a brace-matching scan: comments, strings, character
# literals and preprocessor lines are blanked, then a '{' at file level whose
# last token is ')' opens a function body, named by the identifier before
# that ')''s '('.  extern "C" { … } and namespace blocks are looked through.

import os
import re
import sys

FILE_LIMIT = 1000
TEST_FILE_LIMIT = 1500
FUNCTION_LIMIT = 200

# Offenders being split on another branch right now; each entry goes when
# that work lands (the checker fails once an entry no longer offends, so a
# stale exception cannot stay behind).
KNOWN_OFFENDERS = {
}

SOURCE_DIRS = ('engine', 'app', 'ui')
SUFFIXES = ('.c', '.h', '.cu')


def blank(text):
    """Comments, strings, char literals and preprocessor lines as spaces,
    newlines kept so line numbers stay right."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c in ' \t':
            out.append(c)
            i += 1
            continue
        if at_line_start and c == '#':
            # a preprocessor line, with its continuations
            while i < n and text[i] != '\n':
                if text[i] == '\\' and i + 1 < n and text[i + 1] == '\n':
                    out.append(' \n')
                    i += 2
                    continue
                out.append(' ')
                i += 1
            continue
        at_line_start = False
        if c == '\n':
            at_line_start = True
            out.append(c)
            i += 1
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            # a string stays a token ("S") so extern "C" is still seen
            out.append(c + re.sub(r'[^\n]', ' ', text[i + 1:j - 1]) + c if j - i >= 2 else text[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def functions(text):
    """(line, name, length) of each top-level function body."""
    code = blank(text)
    line_of = []
    line = 1
    for ch in code:
        line_of.append(line)
        if ch == '\n':
            line += 1
    found = []
    depth = 0
    # stack of block kinds: 'transparent' (extern "C", namespace) or other
    stack = []
    fn_start = None
    for i, ch in enumerate(code):
        if ch == '{':
            in_file_scope = all(k == 'transparent' for k in stack)
            if in_file_scope and fn_start is None:
                before = code[:i].rstrip()
                if before.endswith(')'):
                    # match back to the '(' of this parameter list
                    d, j = 0, len(before) - 1
                    while j >= 0:
                        if before[j] == ')':
                            d += 1
                        elif before[j] == '(':
                            d -= 1
                            if d == 0:
                                break
                        j -= 1
                    m = re.search(r'([A-Za-z_]\w*)\s*$', before[:j])
                    name = m.group(1) if m else '?'
                    start = line_of[m.start(1)] if m else line_of[i]
                    fn_start = (start, name, len(stack))
                    stack.append('function')
                elif re.search(r'(extern\s*"\s*"|namespace(\s+\w+)?)\s*$', before):
                    stack.append('transparent')
                else:
                    stack.append('other')
            else:
                stack.append('other')
        elif ch == '}':
            if stack:
                kind = stack.pop()
                if kind == 'function' and fn_start and len(stack) == fn_start[2]:
                    start, name, _ = fn_start
                    found.append((start, name, line_of[i] - start + 1))
                    fn_start = None
    return found


def function_body(name, lines, prefix='static void\n'):
    """A function of `lines` lines in all, from its name to its '}'."""
    body = ''.join('  x++; /* { */\n' if i % 2 else '  s = "}{";\n' for i in range(lines - 3))
    return f'{prefix}{name} (void)\n{{\n{body}}}\n'


def self_test():
    """The scan's answers on a made-up tree: a function of 200 lines is
    one, 199 is none, braces in strings, comments and macros are not
    counted, functions inside extern "C" are, an initializer is none; a
    file of 1000 lines is one, a test file of 1499 none."""
    import tempfile

    text = ('#define BLOCK(x) do { x; } while (0)\n'
            'static const int table[] = { 1, 2, 3 };\n'
            + function_body('long_one', 200) + function_body('short_one', 199)
            + 'extern "C" {\n' + function_body('kernel_launch', 201, 'void\n') + '}\n')
    found = {name: length for _, name, length in functions(text)}
    expected = {'long_one': 200, 'short_one': 199, 'kernel_launch': 201}
    if found != expected:
        print(f'self-test: functions {found}, expected {expected}')
        return 1
    with tempfile.TemporaryDirectory() as root:
        for d in ('engine', 'app', 'ui', 'tests'):
            os.mkdir(os.path.join(root, d))
        with open(os.path.join(root, 'engine', 'big.c'), 'w') as f:
            f.write('int x;\n' * 1000)
        with open(os.path.join(root, 'app', 'fine.h'), 'w') as f:
            f.write('int y;\n' * 999)
        with open(os.path.join(root, 'tests', 'test-fine.c'), 'w') as f:
            f.write('int z;\n' * 1499)
        with open(os.path.join(root, 'ui', 'long.c'), 'w') as f:
            f.write(function_body('long_one', 200))
        import io
        import contextlib
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = main(root)
        lines = out.getvalue().splitlines()
        want = ['engine/big.c: 1000 lines (limit: under 1000)',
                'ui/long.c:2 long_one 200 lines (limit: under 200)',
                '4 files checked, 2 offenders']
        if status != 1 or lines != want:
            print(f'self-test: status {status}, printed {lines}, expected 1 and {want}')
            return 1
    print('self-test: ok')
    return 0


def main(root=None):
    if root is None:
        root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = []
    for d in SOURCE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, d)):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(SUFFIXES):
                    files.append((os.path.join(dirpath, f), FILE_LIMIT))
    tests = os.path.join(root, 'tests')
    for dirpath, dirnames, filenames in os.walk(tests):
        dirnames.sort()
        for f in sorted(filenames):
            if f.endswith(SUFFIXES):
                files.append((os.path.join(dirpath, f), TEST_FILE_LIMIT))

    offenders = 0
    seen_known = set()
    for path, limit in files:
        rel = os.path.relpath(path, root)
        with open(path, encoding='utf-8', errors='replace') as f:
            text = f.read()
        n_lines = text.count('\n') + (0 if text.endswith('\n') or not text else 1)
        if n_lines >= limit:
            print(f'{rel}: {n_lines} lines (limit: under {limit})')
            offenders += 1
        for line, name, length in functions(text):
            if length < FUNCTION_LIMIT:
                continue
            if (rel, name) in KNOWN_OFFENDERS:
                seen_known.add((rel, name))
                print(f'{rel}:{line} {name} {length} (known, {KNOWN_OFFENDERS[(rel, name)]})')
                continue
            print(f'{rel}:{line} {name} {length} lines (limit: under {FUNCTION_LIMIT})')
            offenders += 1
    for key in sorted(set(KNOWN_OFFENDERS) - seen_known):
        print(f'{key[0]}: {key[1]} is listed as a known offender but is under '
              f'{FUNCTION_LIMIT} lines now; drop it from KNOWN_OFFENDERS')
        offenders += 1
    print(f'{len(files)} files checked, {offenders} offenders')
    return 1 if offenders else 0


if __name__ == '__main__':
    sys.exit(self_test() if sys.argv[1:] == ['--self-test'] else main())
