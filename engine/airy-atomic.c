/* Files that appear under their name only when complete (airy-atomic.h):
 * an anonymous temporary (O_TMPFILE) where the file system has them, else
 * a short hidden name that carries the host and the process, so that a
 * later write into the folder can tell a dead process's leftover from a
 * live one's. Named temporaries are known to a fatal signal's handler. */
#define _GNU_SOURCE   /* O_TMPFILE, linkat */
#define G_LOG_DOMAIN "airy-atomic"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "airy-atomic.h"
#include "airy-atomic-private.h"
#include "airy-error.h"

struct _AiryAtomicFile
{
  char     *path;        /* as the caller named it: the messages */
  char     *target;      /* the file replaced: path, or where its links lead */
  char     *dir;         /* the target's folder, the temporaries' */
  char     *temp;        /* the temporary's name; NULL while it is anonymous */
  char     *previous;    /* a group commit's hard link of the file replaced */
  int       fd;
  gboolean  existed;     /* a file was there to replace */
  gboolean  renamed;
};

struct _AiryAtomicGroup
{
  GPtrArray *files;
};

#define TEMP_PREFIX ".airy-"
#define TEMP_RANDOM 6

static gboolean anonymous_allowed = TRUE;
static GPrivate current_group;
/* commits renaming right now, and a fatal signal held back meanwhile */
static gint committing;
static gint held_signal;
/* the thread that set the handlers (airy-sim's main thread): it handles them */
static pthread_t signals_thread;
static volatile sig_atomic_t signals_thread_set;

static void signal_held_raise (void);

void
_airy_atomic_set_anonymous (gboolean allowed)
{
  anonymous_allowed = allowed;
}

/* ---- names ---- */

static guint
host_hash (void)
{
  return g_str_hash (g_get_host_name ());
}

/* dir/.airy-HOST-PID-RANDOM: at most 30 bytes of name, whatever the
 * output's (a legal 255-byte output name stays legal) */
static char *
temp_name (const char *dir)
{
  static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  char random[TEMP_RANDOM + 1];
  guint i;

  for (i = 0; i < TEMP_RANDOM; i++)
    random[i] = chars[g_random_int_range (0, sizeof chars - 1)];
  random[TEMP_RANDOM] = '\0';
  return g_strdup_printf ("%s%c" TEMP_PREFIX "%08x-%d-%s", dir, G_DIR_SEPARATOR, host_hash (), (int) getpid (),
                          random);
}

/* Whether name is one of temp_name's, and whose */
static gboolean
parse_temp_name (const char *name, guint *host, gint64 *pid)
{
  const char *p = name + strlen (TEMP_PREFIX);
  char *end;
  guint64 h;
  gsize n;

  if (!g_str_has_prefix (name, TEMP_PREFIX))
    return FALSE;
  for (n = 0; n < 8; n++)
    if (!g_ascii_isxdigit (p[n]))
      return FALSE;
  if (p[8] != '-')
    return FALSE;
  h = g_ascii_strtoull (p, NULL, 16);
  p += 9;
  if (!g_ascii_isdigit (*p))
    return FALSE;
  *pid = g_ascii_strtoll (p, &end, 10);
  if (*end != '-' || *pid <= 0 || *pid > G_MAXINT)
    return FALSE;
  for (p = end + 1, n = 0; g_ascii_isalnum (p[n]); n++)
    ;
  if (n != TEMP_RANDOM || p[n] != '\0')
    return FALSE;
  *host = (guint) h;
  return TRUE;
}

/* The temporaries of processes of this host that are gone, in dir, once
 * per folder and process. A live process's temporary is never touched:
 * its pid answers, and its named temporaries hold a lock besides (for
 * a process of the same host name in another pid namespace). */
static void
remove_stale_temporaries (const char *dir)
{
  static GMutex lock;
  static GHashTable *seen;
  g_autoptr(GDir) d = NULL;
  const char *name;
  gboolean first;

  g_mutex_lock (&lock);
  if (seen == NULL)
    seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  first = g_hash_table_add (seen, g_strdup (dir));
  g_mutex_unlock (&lock);
  if (!first || (d = g_dir_open (dir, 0, NULL)) == NULL)
    return;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = NULL;
      guint host;
      gint64 pid;
      struct stat st;
      int fd;

      if (!parse_temp_name (name, &host, &pid) || host != host_hash () || pid == getpid ()
          || kill ((pid_t) pid, 0) == 0 || errno != ESRCH)
        continue;
      path = g_build_filename (dir, name, NULL);
      fd = open (path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0)
        continue;
      if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && st.st_uid == geteuid ()
          && (flock (fd, LOCK_EX | LOCK_NB) == 0 || (errno != EWOULDBLOCK && errno != EINTR)))
        unlink (path);
      close (fd);
    }
}

/* ---- the output ---- */

static const char *
file_kind (mode_t mode)
{
  if (S_ISDIR (mode))
    return _("a folder");
  if (S_ISFIFO (mode))
    return _("a FIFO (named pipe)");
  if (S_ISCHR (mode))
    return _("a character device");
  if (S_ISBLK (mode))
    return _("a block device");
  if (S_ISSOCK (mode))
    return _("a socket");
  return _("not a regular file");
}

/* ---- inputs ---- */

int
_airy_input_open (const char *path, gboolean streams, GError **error)
{
  struct stat st;
  int fd, flags;

  g_return_val_if_fail (path != NULL, -1);

  _airy_file_io_note (path);
  fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return -1;
  if (fstat (fd, &st) != 0)
    {
      int e = errno;

      close (fd);
      errno = e;
      return -1;
    }
  if (!S_ISREG (st.st_mode)
      && !(streams && (S_ISFIFO (st.st_mode) || S_ISCHR (st.st_mode) || S_ISSOCK (st.st_mode))))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: is %s, not a regular file"), path,
                   file_kind (st.st_mode));
      close (fd);
      return -1;
    }
  /* a stream's FIFO is read as a FIFO is: from its writer, waited for */
  if (S_ISFIFO (st.st_mode))
    {
      close (fd);
      fd = open (path, O_RDONLY | O_CLOEXEC);
      return fd;
    }
  /* reads wait for data again (a pipe's writer) */
  flags = fcntl (fd, F_GETFL);
  if (flags < 0 || fcntl (fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
    {
      int e = errno;

      close (fd);
      errno = e;
      return -1;
    }
  return fd;
}

static void
set_not_regular (GError **error, const char *path, const char *target, mode_t mode)
{
  if (g_str_equal (path, target))
    g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                 _("%s: is %s, not a regular file: an output replaces regular files only"), path,
                 file_kind (mode));
  else
    g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                 _("%s: leads to %s, which is %s, not a regular file: an output replaces regular files only"),
                 path, target, file_kind (mode));
}

char *
_airy_atomic_resolve_output (const char *path, GError **error)
{
  g_autofree char *p = g_strdup (path);
  guint hops;

  g_return_val_if_fail (path != NULL && *path, NULL);

  for (hops = 0; hops < 40; hops++)
    {
      g_autofree char *link = NULL;
      struct stat st;

      if (lstat (p, &st) != 0)
        {
          int e = errno;

          /* a new file: its folder is the open's to check */
          if (e == ENOENT)
            return g_steal_pointer (&p);
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: cannot write: %s"), path, g_strerror (e));
          return NULL;
        }
      if (S_ISREG (st.st_mode))
        return g_steal_pointer (&p);
      if (!S_ISLNK (st.st_mode))
        {
          set_not_regular (error, path, p, st.st_mode);
          return NULL;
        }
      link = g_file_read_link (p, NULL);
      if (link == NULL)
        break;
      if (!g_path_is_absolute (link))
        {
          g_autofree char *dir = g_path_get_dirname (p);
          g_autofree char *joined = g_build_filename (dir, link, NULL);

          g_free (p);
          p = g_steal_pointer (&joined);
        }
      else
        {
          g_free (p);
          p = g_steal_pointer (&link);
        }
    }
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: cannot write: %s"), path, g_strerror (ELOOP));
  return NULL;
}

/* ---- one file ---- */

static void
set_write_error (GError **error, const char *path, int e)
{
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: cannot write: %s"), path, g_strerror (e));
}

/* A new file of a free name of temp_name's, registered before it exists
 * (the name carries this process's pid: nobody else makes it) */
static char *
make_named (const char *dir, int fd, int *out_fd, int *err)
{
  guint tries;

  for (tries = 0; tries < 100; tries++)
    {
      g_autofree char *name = temp_name (dir);
      int r;

      _airy_atomic_register (name);
      if (fd >= 0)
        {
          g_autofree char *proc = g_strdup_printf ("/proc/self/fd/%d", fd);
          r = linkat (AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW);
        }
      else
        r = *out_fd = open (name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (r >= 0)
        return g_steal_pointer (&name);
      *err = errno;
      _airy_atomic_unregister (name);
      if (*err != EEXIST)
        return NULL;
    }
  return NULL;
}

static void
atomic_file_free (AiryAtomicFile *file)
{
  if (file->fd >= 0)
    close (file->fd);
  if (file->temp && !file->renamed)
    unlink (file->temp);
  if (file->previous)
    unlink (file->previous);
  if (file->temp)
    _airy_atomic_unregister (file->temp);
  if (file->previous)
    _airy_atomic_unregister (file->previous);
  g_free (file->path);
  g_free (file->target);
  g_free (file->dir);
  g_free (file->temp);
  g_free (file->previous);
  g_free (file);
}

AiryAtomicFile *
airy_atomic_file_new (const char      *path,
                      AiryAtomicFlags  flags,
                      GError         **error)
{
  g_autofree char *target = NULL;
  AiryAtomicFile *file;
  int e = 0;

  g_return_val_if_fail (path != NULL, NULL);
  _airy_file_io_note_write (path);

  target = _airy_atomic_resolve_output (path, error);
  if (target == NULL)
    return NULL;
  file = g_new0 (AiryAtomicFile, 1);
  file->path = g_strdup (path);
  file->target = g_steal_pointer (&target);
  file->dir = g_path_get_dirname (file->target);
  file->fd = -1;
  remove_stale_temporaries (file->dir);

  /* anonymous: nothing to leave behind, whatever ends the process (it is
   * linked by /proc/self/fd at the commit) */
  if (!(flags & AIRY_ATOMIC_SHARED) && anonymous_allowed && g_file_test ("/proc/self/fd", G_FILE_TEST_IS_DIR))
    file->fd = open (file->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
  if (file->fd < 0)
    {
      file->temp = make_named (file->dir, -1, &file->fd, &e);
      if (file->temp == NULL)
        {
          set_write_error (error, path, e);
          atomic_file_free (file);
          return NULL;
        }
      /* held until the commit: a later write's cleanup leaves it alone */
      flock (file->fd, LOCK_EX | LOCK_NB);
    }
  /* outputs are ordinary files, whatever the umask */
  fchmod (file->fd, 0644);
  return file;
}

int
airy_atomic_file_get_fd (AiryAtomicFile *file)
{
  g_return_val_if_fail (file != NULL, -1);

  return file->fd;
}

const char *
airy_atomic_file_get_temp_path (AiryAtomicFile *file)
{
  g_return_val_if_fail (file != NULL, NULL);

  return file->temp;
}

void
airy_atomic_file_abort (AiryAtomicFile *file)
{
  if (file != NULL)
    atomic_file_free (file);
}

/* ---- commits ---- */

/* Before any rename: the temporary complete and named, the output still
 * a regular file or none, and (several files) the previous one kept */
static gboolean
commit_prepare (AiryAtomicFile *file, gboolean keep_previous, GError **error)
{
  struct stat st;
  int e = 0;

  file->existed = lstat (file->target, &st) == 0;
  if (file->existed && !S_ISREG (st.st_mode))
    {
      set_not_regular (error, file->path, file->target, st.st_mode);
      return FALSE;
    }
  if (file->temp == NULL)
    {
      file->temp = make_named (file->dir, file->fd, NULL, &e);
      if (file->temp == NULL)
        {
          set_write_error (error, file->path, e);
          return FALSE;
        }
    }
  e = close (file->fd) == 0 ? 0 : errno;
  file->fd = -1;
  if (e != 0)
    {
      set_write_error (error, file->path, e);
      return FALSE;
    }
  /* a hard link of the file replaced (none where the file system has no
   * hard links: then it cannot be put back) */
  if (keep_previous && file->existed)
    {
      guint tries;

      for (tries = 0; tries < 100 && file->previous == NULL; tries++)
        {
          g_autofree char *name = temp_name (file->dir);

          _airy_atomic_register (name);
          if (link (file->target, name) == 0)
            file->previous = g_steal_pointer (&name);
          else
            {
              _airy_atomic_unregister (name);
              if (errno != EEXIST)
                break;
            }
        }
    }
  return TRUE;
}

/* Commits files together and frees them: all renamed, or none left. */
static gboolean
commit_files (AiryAtomicFile **files, guint n_files, GError **error)
{
  gboolean ok = TRUE;
  guint i, n = 0;

  for (i = 0; ok && i < n_files; i++)
    ok = commit_prepare (files[i], n_files > 1, error);
  if (ok)
    {
      g_atomic_int_inc (&committing);
      for (n = 0; ok && n < n_files; n++)
        {
          AiryAtomicFile *f = files[n];

          if (rename (f->temp, f->target) == 0)
            f->renamed = TRUE;
          else
            {
              set_write_error (error, f->path, errno);
              ok = FALSE;
            }
        }
      /* one failed: the files renamed before it are put back (a new
       * one removed; a replaced one without its hard link stays new) */
      for (i = 0; !ok && i < n_files; i++)
        {
          AiryAtomicFile *f = files[i];

          if (!f->renamed)
            continue;
          if (f->previous && rename (f->previous, f->target) == 0)
            {
              _airy_atomic_unregister (f->previous);
              g_clear_pointer (&f->previous, g_free);
            }
          else if (!f->existed)
            unlink (f->target);
        }
      if (g_atomic_int_dec_and_test (&committing))
        signal_held_raise ();
    }
  for (i = 0; i < n_files; i++)
    atomic_file_free (files[i]);
  return ok;
}

gboolean
airy_atomic_file_commit (AiryAtomicFile *file,
                         GError        **error)
{
  AiryAtomicGroup *group = g_private_get (&current_group);

  g_return_val_if_fail (file != NULL, FALSE);

  if (group != NULL)
    {
      g_ptr_array_add (group->files, file);
      return TRUE;
    }
  return commit_files (&file, 1, error);
}

gboolean
airy_atomic_set_contents (const char *path,
                          const char *data,
                          gsize       length,
                          GError    **error)
{
  AiryAtomicFile *file = airy_atomic_file_new (path, AIRY_ATOMIC_DEFAULT, error);
  gsize done = 0;

  if (file == NULL)
    return FALSE;
  while (done < length)
    {
      gssize w = write (file->fd, data + done, length - done);

      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        {
          set_write_error (error, path, w < 0 ? errno : ENOSPC);
          airy_atomic_file_abort (file);
          return FALSE;
        }
      done += (gsize) w;
    }
  return airy_atomic_file_commit (file, error);
}

AiryAtomicGroup *
airy_atomic_group_begin (void)
{
  AiryAtomicGroup *group;

  g_return_val_if_fail (g_private_get (&current_group) == NULL, NULL);

  group = g_new0 (AiryAtomicGroup, 1);
  group->files = g_ptr_array_new ();
  g_private_set (&current_group, group);
  return group;
}

static void
group_end (AiryAtomicGroup *group)
{
  if (g_private_get (&current_group) == group)
    g_private_set (&current_group, NULL);
  g_ptr_array_unref (group->files);
  g_free (group);
}

gboolean
airy_atomic_group_commit (AiryAtomicGroup *group,
                          GError         **error)
{
  gboolean ok;

  g_return_val_if_fail (group != NULL, FALSE);

  g_private_set (&current_group, NULL);
  ok = commit_files ((AiryAtomicFile **) group->files->pdata, group->files->len, error);
  g_ptr_array_set_size (group->files, 0);
  group_end (group);
  return ok;
}

void
airy_atomic_group_abort (AiryAtomicGroup *group)
{
  guint i;

  if (group == NULL)
    return;
  for (i = 0; i < group->files->len; i++)
    atomic_file_free (g_ptr_array_index (group->files, i));
  group_end (group);
}

/* ---- fatal signals ---- */

/* The temporaries with a name, for a fatal signal's handler to remove
 * (airy-sim): fixed slots that it reads without locks or allocation. A
 * slot is 0 (free), 1 (being filled) or 2 (live). */
#define LIVE_SLOTS 64
static char live_paths[LIVE_SLOTS][4096];
static gint live_state[LIVE_SLOTS];

void
_airy_atomic_register (const char *tmp_path)
{
  guint i;

  if (strlen (tmp_path) >= sizeof live_paths[0])
    return;
  for (i = 0; i < LIVE_SLOTS; i++)
    if (g_atomic_int_compare_and_exchange (&live_state[i], 0, 1))
      {
        strcpy (live_paths[i], tmp_path);
        g_atomic_int_set (&live_state[i], 2);
        return;
      }
}

void
_airy_atomic_unregister (const char *tmp_path)
{
  guint i;

  for (i = 0; i < LIVE_SLOTS; i++)
    if (g_atomic_int_get (&live_state[i]) == 2 && strcmp (live_paths[i], tmp_path) == 0)
      {
        g_atomic_int_set (&live_state[i], 0);
        return;
      }
}

/* Async-signal-safe: lock-free atomics and unlink () only. */
void
_airy_atomic_remove_live (void)
{
  guint i;

  for (i = 0; i < LIVE_SLOTS; i++)
    if (g_atomic_int_get (&live_state[i]) == 2)
      unlink (live_paths[i]);
}

static void
die_of (int sig)
{
  _airy_atomic_remove_live ();
  signal (sig, SIG_DFL);
  raise (sig);
}

/* The main thread may be inside write (), so this runs in the handler
 * itself, with async-signal-safe calls only (unlink, signal, raise). While
 * a commit renames, the signal waits for it: the outputs of a group then
 * all appear, rather than some. */
static void
on_fatal_signal (int sig)
{
  /* the thread that commits decides: one signal handled on a worker while
   * the main thread renames could remove temporaries and let a commit
   * finish both */
  if (signals_thread_set && !pthread_equal (pthread_self (), signals_thread))
    {
      pthread_kill (signals_thread, sig);
      return;
    }
  /* held first, then the count read: a commit that ends between the two
   * reads the held signal after its decrement and dies of it itself */
  g_atomic_int_set (&held_signal, sig);
  if (g_atomic_int_get (&committing) > 0)
    return;
  die_of (sig);
}

static void
signal_held_raise (void)
{
  int sig = g_atomic_int_get (&held_signal);

  if (sig != 0)
    die_of (sig);
}

void
_airy_atomic_remove_on_signals (void)
{
  static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE,
                              SIGXCPU, SIGXFSZ };
  struct sigaction sa;
  guint i;

  signals_thread = pthread_self ();
  signals_thread_set = 1;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_fatal_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset (&sa.sa_mask);
  for (i = 0; i < G_N_ELEMENTS (sigs); i++)
    sigaddset (&sa.sa_mask, sigs[i]);
  for (i = 0; i < G_N_ELEMENTS (sigs); i++)
    {
      struct sigaction old;

      /* nohup and friends ignore a signal on purpose: keep it ignored */
      if (sigaction (sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
        continue;
      sigaction (sigs[i], &sa, NULL);
    }
}

/* ---- the file-thread guard ---- */

static GThread *volatile io_forbidden;

void
_airy_file_io_forbid_thread (GThread *thread)
{
  io_forbidden = thread;
}

void
_airy_file_io_note (const char *path)
{
  if (io_forbidden != NULL && g_thread_self () == io_forbidden)
    g_critical ("%s: a file read on a thread that must not touch files", path);
}

void
_airy_file_io_note_write (const char *path)
{
  if (io_forbidden != NULL && g_thread_self () == io_forbidden)
    g_critical ("%s: a file written on a thread that must not touch files", path);
}
