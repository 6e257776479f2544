/*
 * A program built the way a C user builds one against an installed sitefile:
 * `cc installed.c $(pkg-config --cflags --libs sitefile)`. It checks that the header and the
 * library it found agree on the version, and resolves a page of a small content map.
 * Run by ffi/tests/install.rs.
 */
#include <sitefile.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  char version[64];
  snprintf(version, sizeof version, "%d.%d.%d", SITEFILE_VERSION_MAJOR, SITEFILE_VERSION_MINOR,
           SITEFILE_VERSION_PATCH);
  if (strcmp(version, sitefile_version()) != 0) {
    fprintf(stderr, "header %s, library %s\n", version, sitefile_version());
    return 1;
  }
  const char *content =
      "{\"pages-home\": {\"path\": \"/\", \"sections\": [{\"__resolveType\": "
      "\"site/sections/Hello.tsx\", \"text\": \"installed\"}]}}";
  sitefile_site *site = NULL;
  sitefile_resolution *res = NULL;
  char *step = NULL;
  int ok = sitefile_site_from_content(content, NULL, &site) == SITEFILE_STATUS_OK &&
           sitefile_resolve_begin(site, "{\"url\": \"https://hello.example/\"}", NULL, &res) ==
               SITEFILE_STATUS_OK &&
           sitefile_resolution_next(res, &step) == SITEFILE_STATUS_OK &&
           strstr(step, "\"component\":\"site/sections/Hello.tsx\"") != NULL;
  if (!ok) fprintf(stderr, "failed: %s\n", sitefile_last_error());
  sitefile_string_free(step);
  sitefile_resolution_free(res);
  sitefile_site_free(site);
  if (!ok) return 1;
  printf("installed sitefile %s resolves pages\n", sitefile_version());
  return 0;
}
