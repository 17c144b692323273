/* Helpers shared by the GUI tests (viewer, app). */
#pragma once

#include <locale.h>
#include <string.h>
#include <glib/gi18n.h>
#include <gtk/gtk.h>

/* Messages in `lang` from the build tree's catalogues (AIRY_LOCALEDIR). */
static inline void
test_use_language (const char *lang)
{
  g_autofree char *dir = g_getenv ("AIRY_LOCALEDIR") ? g_strdup (g_getenv ("AIRY_LOCALEDIR"))
                                                    : g_test_build_filename (G_TEST_BUILT, "..", "po", NULL);

  g_setenv ("LANGUAGE", lang, TRUE);
  setlocale (LC_ALL, "C.UTF-8");
  bindtextdomain (GETTEXT_PACKAGE, dir);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
}

/* The first widget of `type` under root; with `label`, a button of that
 * label or the control beside a label of that text. */
static inline GtkWidget *
test_find_widget (GtkWidget *root, GType type, const char *label)
{
  GtkWidget *child, *found, *next = gtk_widget_get_next_sibling (root);

  if (G_TYPE_CHECK_INSTANCE_TYPE (root, type)
      && (label == NULL || (GTK_IS_BUTTON (root) && g_strcmp0 (gtk_button_get_label (GTK_BUTTON (root)), label) == 0)))
    return root;
  if (label && GTK_IS_LABEL (root) && g_str_equal (gtk_label_get_text (GTK_LABEL (root)), label)
      && next && G_TYPE_CHECK_INSTANCE_TYPE (next, type))
    return next;
  for (child = gtk_widget_get_first_child (root); child; child = gtk_widget_get_next_sibling (child))
    if ((found = test_find_widget (child, type, label)) != NULL)
      return found;
  return NULL;
}

/* The visible label under root whose text contains `part`. */
static inline GtkWidget *
test_visible_label (GtkWidget *root, const char *part)
{
  GtkWidget *child, *found;

  if (GTK_IS_LABEL (root) && gtk_widget_is_visible (root) && strstr (gtk_label_get_text (GTK_LABEL (root)), part))
    return root;
  for (child = gtk_widget_get_first_child (root); child; child = gtk_widget_get_next_sibling (child))
    if ((found = test_visible_label (child, part)) != NULL)
      return found;
  return NULL;
}

/* A "notify" handler that counts the notifications of each property in
 * the GHashTable (name → count) it is given; test_notified() reads them. */
static inline void
test_count_notify (GObject *object, GParamSpec *pspec, gpointer counts)
{
  g_hash_table_replace (counts, (gpointer) pspec->name, GUINT_TO_POINTER (GPOINTER_TO_UINT (
                          g_hash_table_lookup (counts, pspec->name)) + 1));
}

static inline guint
test_notified (GHashTable *counts, const char *name)
{
  return GPOINTER_TO_UINT (g_hash_table_lookup (counts, name));
}
