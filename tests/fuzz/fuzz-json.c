/* System JSON: any input either fails with an error or loads; a loaded
 * system written back out must load again to the very same system. */
#include "fuzz-common.h"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_init ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = NULL;
  g_autoptr(AirySystem) again = NULL;
  g_autofree char *json = NULL;
  g_autofree char *json_again = NULL;

  system = airy_system_new_from_data ((const char *) data, size, NULL, "fuzz.json", &error);
  if (system == NULL)
    {
      /* a failure is a GError of Airy's domain with a message */
      if (error == NULL || error->domain != AIRY_ERROR || error->message[0] == '\0')
        abort ();
      return 0;
    }
  g_assert (error == NULL);

  json = airy_system_to_json (system);
  again = airy_system_new_from_data (json, -1, NULL, "fuzz-written.json", &error);
  if (again == NULL)
    {
      g_printerr ("the written system does not load again: %s\n%s\n", error->message, json);
      abort ();
    }
  if (airy_system_hash (again) != airy_system_hash (system))
    {
      json_again = airy_system_to_json (again);
      g_printerr ("the reloaded system differs:\n--- written\n%s\n--- reloaded and written\n%s\n",
                  json, json_again);
      abort ();
    }
  return 0;
}
