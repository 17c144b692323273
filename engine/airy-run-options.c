#define G_LOG_DOMAIN "airy-run"

#include "config.h"

#include "airy-run.h"

/* AiryRunOptions as a boxed type, for bindings and for callers that keep
 * options: a boxed copy owns its backend name and its arrays. */

G_DEFINE_BOXED_TYPE (AiryRunOptions, airy_run_options, airy_run_options_copy, airy_run_options_free)

AiryRunOptions *
airy_run_options_new (void)
{
  return g_new0 (AiryRunOptions, 1);
}

static guint *
dup_uints (const guint *v,
           guint        n)
{
  return v != NULL && n > 0 ? g_memdup2 (v, n * sizeof (guint)) : NULL;
}

/* the entries of chunks a run reads: one per device it runs on, the named
 * ones or every device of the backend it chooses */
static guint
n_chunks (const AiryRunOptions *options)
{
  AiryBackend *backend;

  if (options->devices != NULL && options->n_devices > 0)
    return options->n_devices;
  backend = airy_backend_choose (options->backend, NULL);
  return backend != NULL ? airy_backend_n_devices (backend) : 0;
}

AiryRunOptions *
airy_run_options_copy (const AiryRunOptions *options)
{
  AiryRunOptions *copy;

  g_return_val_if_fail (options != NULL, NULL);
  copy = g_memdup2 (options, sizeof *options);
  copy->backend = g_strdup (options->backend);
  copy->devices = dup_uints (options->devices, options->n_devices);
  copy->n_devices = copy->devices ? options->n_devices : 0;
  copy->chunks = options->chunks ? dup_uints (options->chunks, n_chunks (options)) : NULL;
  copy->rank_planes = options->rank_planes && options->comm
                        ? dup_uints (options->rank_planes, options->comm->size) : NULL;
  return copy;
}

void
airy_run_options_free (AiryRunOptions *options)
{
  if (options == NULL)
    return;
  g_free ((char *) options->backend);
  g_free ((guint *) options->devices);
  g_free ((guint *) options->chunks);
  g_free ((guint *) options->rank_planes);
  g_free (options);
}

void
airy_run_options_set_backend (AiryRunOptions *options,
                              const char     *backend)
{
  char *old;

  g_return_if_fail (options != NULL);
  old = (char *) options->backend;
  options->backend = g_strdup (backend);
  g_free (old);
}

void
airy_run_options_set_devices (AiryRunOptions *options,
                              const guint    *devices,
                              guint           n_devices)
{
  guint *old;

  g_return_if_fail (options != NULL);
  old = (guint *) options->devices;
  options->devices = dup_uints (devices, n_devices);
  options->n_devices = options->devices ? n_devices : 0;
  g_free (old);
}
