#!/usr/bin/env python3
"""The MIME types Airy opens, from their declarations: the system's in the
shared-mime-info file, then each stack format's `.mime_type` in the engine's
format table (`formats[]` in engine/airy-image-file.c, in its order).

    gen-mime-types.py SOURCE_ROOT TEMPLATE OUTPUT

writes TEMPLATE to OUTPUT with @MIME_TYPES@ (the desktop file's
`a;b;c;`) and @MEDIATYPES@ (the metainfo's `<mediatype>` lines, indented as
the placeholder is) filled in.
"""
import os
import re
import sys


def read(path):
    with open(path, encoding='utf-8') as f:
        return f.read()


def mime_types(root):
    mime_xml = read(os.path.join(root, 'resources', 'io.github.airyoptics.Airy.mime.xml'))
    types = re.findall(r'<mime-type type="([^"]+)"', mime_xml)
    engine = os.path.join(root, 'engine')
    table = re.search(r'formats\[\]\s*=\s*\{([^}]*)\}', read(os.path.join(engine, 'airy-image-file.c')))
    names = re.findall(r'&(\w+)', table.group(1))
    sources = ''.join(read(os.path.join(engine, n)) for n in sorted(os.listdir(engine)) if n.endswith('.c'))
    for name in names:
        body = re.search(r'const AiryImageFormat ' + name + r'\s*=\s*\{(.*?)\n\};', sources, re.S)
        if body is None:
            sys.exit('gen-mime-types: no definition of %s' % name)
        mime = re.search(r'\.mime_type\s*=\s*"([^"]+)"', body.group(1))
        # a chunked format (a folder) has no MIME type of its own
        if mime and mime.group(1) not in types and not mime.group(1).startswith('inode/'):
            types.append(mime.group(1))
    return types


def main():
    root, template, output = sys.argv[1:4]
    types = mime_types(root)
    text = read(template)
    text = text.replace('@MIME_TYPES@', ''.join(t + ';' for t in types))
    m = re.search(r'^([ \t]*)@MEDIATYPES@[ \t]*$', text, re.M)
    if m:
        lines = '\n'.join('%s<mediatype>%s</mediatype>' % (m.group(1), t) for t in types)
        text = text[:m.start()] + lines + text[m.end():]
    with open(output, 'w', encoding='utf-8') as f:
        f.write(text)


main()
