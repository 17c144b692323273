/* airy-sim's own helpers, shared by its commands: airy-sim.c (the
 * common options, outputs and inputs, signals, the ranks, main),
 * airy-sim-run.c, -fit.c, -sweep.c, -bench.c and -grad.c (one command each). */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "airy.h"

G_BEGIN_DECLS

enum { EXIT_OK = 0, EXIT_RUN = 1, EXIT_INPUT = 2 };

typedef struct
{
  gboolean tty;
  gint64   start;
  gboolean shown;
} Progress;

typedef struct
{
  const char *role;
  const char *path;
} NamedFile;

/* the options of a command (app/airy-sim-options.c) */
typedef enum
{
  SIM_OPTION_FLAG,      /* gboolean */
  SIM_OPTION_STRING,    /* char *, given once */
  SIM_OPTION_INT,       /* int, given once */
  SIM_OPTION_STRINGS,   /* GStrv, the option repeated */
} SimOptionKind;

typedef struct
{
  const char    *name;         /* "output": --output */
  char           short_name;   /* 'o': -o, or 0 */
  SimOptionKind  kind;
  gpointer       target;
} SimOption;

/* Parses argv (argv[0] the command's name) against options (ended by
 * { NULL }) and the table of options that exclude each other; leaves the
 * other arguments in argv[1 …]. EXIT_OK, or the status of the usage error
 * it printed (an unknown option, a missing or malformed value, an option
 * given twice, a conflicting pair). */
int parse_command_line (const char *command, const SimOption *options, int *argc, char ***argv);

/* errors and usage (exit status 1 or 2) */
int fail (const GError *error);
int usage_error (const char *format, ...) G_GNUC_PRINTF (1, 2);
void print_help (void);
gboolean check_environment (GError **error);
void print_warnings (GPtrArray *warnings);
AirySystem *load_system (const char *file, const char *preset, GError **error);

/* the options and outputs of the commands */
void on_progress (guint done, guint total, gpointer user_data);
gboolean parse_devices (const char *arg, GArray *devices, GError **error);
gboolean check_output_path (const char *option, const char *path, const char *const *suffixes,
                            GError **error);
gboolean parse_tiff_format (const char *arg, AiryTiffFormat *format);
const char *const *stack_suffixes (void);
gboolean is_store_output (const char *path);
guint64  peak_rss_bytes (void);
/* --threads and --backend as every computing command takes them: EXIT_OK,
 * or the status of the usage error it printed */
int      check_threads_backend (int threads, const char *backend);
char    *canonical_name (const char *path);
gboolean check_outputs (const NamedFile *outputs, guint n_outputs, const NamedFile *inputs,
                        guint n_inputs, GError **error);
gboolean check_outputs_against_system (const NamedFile *outputs, guint n_outputs, AirySystem *system,
                                       GError **error);

/* the processes of this launch: the MPI ranks, or this process alone */
extern AiryComm *ranks;
gboolean is_root (void);
int ranks_fail (GError *error);
int ranks_failed (const GError *error);

/* What the ranks agree on before a run (app/airy-sim-agree.c): the
 * builder holds an open JSON object of sections ("system", "files",
 * "outputs", "planes", "sweep", "bench"; describe_system adds the first
 * two: the whole system and its input files' contents). ranks_agree_on
 * closes it; collective, and an agreement itself (a rank that failed
 * before meets the others there). FALSE with an agreed bad-input error
 * (for ranks_failed) naming the first rank that differs from rank 0, and
 * how. An input that a rank cannot read is left to the run to report. */
void     describe_system (JsonBuilder *builder, AirySystem *system);
void     describe_option (JsonBuilder *builder, const char *option, const char *value);
void     describe_output (JsonBuilder *builder, const char *option, const char *path);
gboolean ranks_agree_on (JsonBuilder *builder, GError **error);
gboolean parse_chunks (const char *arg, GArray *chunks, GError **error);
gboolean write_outputs (AiryResult *result, AirySystem *system, const char *output, const char *psf_out,
                        const char *png_out, const AiryTiffWriteOptions *wo, double *write_s, GError **error);

/* the variables of grad and optimize (app/airy-sim-grad.c): the system
 * and its file's JSON in parser; the --vary paths (each a list split at
 * commas); GRAD.json's or OPTIMIZED.json's name with "-VAR.tif" for a
 * pixel variable's file */
AirySystem *load_system_json (const char *file, JsonParser *parser, GError **error);
GPtrArray  *parse_vary       (JsonNode *root, AirySystem *system, char **vary, GError **error);
struct _AiryGradVar;
char       *pixels_file      (const char *output, const struct _AiryGradVar *var);
/* the variable a gradient's error names first (not followed in this
 * system) left out with a warning, and its files entry (files may be
 * NULL); FALSE when the error names none */
gboolean    drop_refused     (GPtrArray *vars, char **files, const GError *error);
/* airy-sim bench --grad (app/airy-sim-bench-grad.c) */
int         bench_grad       (AirySystem *system, const char *what, int repeat, guint threads, gboolean json);

/* the commands */
int cmd_run (int argc, char **argv);
int cmd_fit (int argc, char **argv);
int cmd_sweep (int argc, char **argv);
int cmd_bench (int argc, char **argv);
int cmd_grad (int argc, char **argv);
int cmd_optimize (int argc, char **argv);

G_END_DECLS
