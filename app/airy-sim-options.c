/* airy-sim's one command-line parser: every command's options from its
 * table, and one table of the options that exclude each other. An
 * unknown option, a missing or malformed value, an option given twice
 * and a conflicting pair are usage errors (exit status 2) that name the
 * option: nothing is silently ignored or silently wins. */
#define G_LOG_DOMAIN "airy-sim"

#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <glib/gi18n.h>

#include "airy-sim-private.h"

/* Options of a command that cannot be given together; "name=value"
 * stands for the option with that value. */
static const struct
{
  const char *command;
  const char *a;
  const char *b;
  const char *why;
} conflicts[] = {
  { "bench", "write-dir", "no-write", N_("the write is timed in --write-dir, or not at all") },
  { "fit", "objective=least-squares", "gain", N_("--gain converts counts to photons for the Poisson objective") },
  { "fit", "objective=least-squares", "offset",
    N_("--offset converts counts to photons for the Poisson objective") },
};

typedef struct
{
  const char *value;    /* as given (into argv); NULL: not given */
  char        as[64];   /* the spelling given: -o or --output */
} Given;

static const SimOption *
find_long (const SimOption *options, const char *name, gsize len)
{
  const SimOption *o;

  for (o = options; o->name; o++)
    if (strlen (o->name) == len && strncmp (o->name, name, len) == 0)
      return o;
  return NULL;
}

static const SimOption *
find_short (const SimOption *options, char c)
{
  const SimOption *o;

  for (o = options; o->name; o++)
    if (o->short_name && o->short_name == c)
      return o;
  return NULL;
}

/* "name" or "name=value" of the conflicts table: given? */
static gboolean
conflict_side_given (const char *side, const SimOption *options, const Given *given)
{
  const char *eq = strchr (side, '=');
  gsize len = eq ? (gsize) (eq - side) : strlen (side);
  guint i;

  for (i = 0; options[i].name; i++)
    if (strlen (options[i].name) == len && strncmp (options[i].name, side, len) == 0 && given[i].value
        && (eq == NULL || g_str_equal (given[i].value, eq + 1)))
      return TRUE;
  return FALSE;
}

/* --name, or --name value for a "name=value" side */
static char *
conflict_side_text (const char *side)
{
  g_autofree char *text = g_strconcat ("--", side, NULL);

  g_strdelimit (text, "=", ' ');
  return g_steal_pointer (&text);
}

/* The value of option o (given as `as`) into its target */
static int
store (const char *command, const SimOption *o, Given *g, const char *as, const char *value)
{
  if (g->value && o->kind != SIM_OPTION_STRINGS && o->kind != SIM_OPTION_FLAG)
    return usage_error (_("%s: %s given twice (%s, then %s): give it once"), command, as, g->value, value);
  g->value = value;
  g_strlcpy (g->as, as, sizeof g->as);
  switch (o->kind)
    {
    case SIM_OPTION_FLAG:
      *(gboolean *) o->target = TRUE;
      break;
    case SIM_OPTION_STRING:
      *(char **) o->target = g_strdup (value);
      break;
    case SIM_OPTION_STRINGS:
      {
        char ***v = o->target;
        guint n = *v ? g_strv_length (*v) : 0;

        *v = g_renew (char *, *v, n + 2);
        (*v)[n] = g_strdup (value);
        (*v)[n + 1] = NULL;
      }
      break;
    case SIM_OPTION_INT:
      {
        char *end = NULL;
        gint64 n = g_ascii_strtoll (value, &end, 10);

        if (*value == '\0' || *end != '\0' || n < G_MININT || n > G_MAXINT)
          return usage_error (_("%s: must be a whole number, got \"%s\""), as, value);
        *(int *) o->target = (int) n;
      }
      break;
    }
  return EXIT_OK;
}

/* One argument of options: --name[=value] (its value maybe the next
 * argument, *i moves past it), or short ones (-q, -o FILE, -oFILE, -qo FILE) */
static int
parse_option (const char *command, const SimOption *options, Given *given, int argc, char **args, int *i)
{
  const char *arg = args[*i];
  const SimOption *o;
  int status;

  if (arg[1] == '-')
    {
      const char *eq = strchr (arg, '=');
      g_autofree char *as = g_strndup (arg, eq ? (gsize) (eq - arg) : strlen (arg));
      const char *value = eq ? eq + 1 : NULL;

      o = find_long (options, as + 2, strlen (as) - 2);
      if (o == NULL)
        return usage_error (_("%s: unknown option %s"), command, as);
      if (o->kind == SIM_OPTION_FLAG && value)
        return usage_error (_("%s: %s takes no value, got \"%s\""), command, as, arg);
      if (o->kind != SIM_OPTION_FLAG && value == NULL)
        {
          if (*i + 1 >= argc)
            return usage_error (_("%s: %s needs a value"), command, as);
          value = args[++*i];
        }
      return store (command, o, &given[o - options], as, value ? value : "");
    }
  for (const char *c = arg + 1; *c; c++)
    {
      char as[3] = { '-', *c, '\0' };
      const char *value = "";

      o = find_short (options, *c);
      if (o == NULL)
        return usage_error (_("%s: unknown option %s"), command, as);
      if (o->kind != SIM_OPTION_FLAG)
        {
          if (c[1] != '\0')
            value = c + 1;
          else if (*i + 1 < argc)
            value = args[++*i];
          else
            return usage_error (_("%s: %s needs a value"), command, as);
        }
      status = store (command, o, &given[o - options], as, value);
      if (status != EXIT_OK || o->kind != SIM_OPTION_FLAG)
        return status;
    }
  return EXIT_OK;
}

int
parse_command_line (const char *command, const SimOption *options, int *argc, char ***argv)
{
  g_autofree Given *given = NULL;
  char **args = *argv;
  int i, kept = 1, status;
  guint n_options = 0, k;
  gboolean options_end = FALSE;

  while (options[n_options].name)
    n_options++;
  given = g_new0 (Given, n_options + 1);
  for (i = 1; i < *argc; i++)
    {
      /* "-" alone and everything after "--" are arguments */
      if (options_end || args[i][0] != '-' || args[i][1] == '\0')
        args[kept++] = args[i];
      else if (g_str_equal (args[i], "--"))
        options_end = TRUE;
      else if ((status = parse_option (command, options, given, *argc, args, &i)) != EXIT_OK)
        return status;
    }
  args[kept] = NULL;
  *argc = kept;
  for (k = 0; k < G_N_ELEMENTS (conflicts); k++)
    if (g_str_equal (conflicts[k].command, command) && conflict_side_given (conflicts[k].a, options, given)
        && conflict_side_given (conflicts[k].b, options, given))
      {
        g_autofree char *a = conflict_side_text (conflicts[k].a);
        g_autofree char *b = conflict_side_text (conflicts[k].b);

        return usage_error (_("%s: %s and %s exclude each other (%s): give one of them"), command, a, b,
                            _(conflicts[k].why));
      }
  return EXIT_OK;
}
