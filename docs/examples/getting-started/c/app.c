/*
 * app.c: resolves the home page of my-site through libsitefile and prints it
 * (docs/src/getting-started/c.md). A real host parses the steps with its JSON library;
 * this one reads the call ids with strstr to need none.
 */
#include <sitefile.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the host's products loader answers (a real host asks its commerce platform). */
static const char *PRODUCTS =
    "[{\"name\": \"Trail runner\", \"price\": 89.9}, {\"name\": \"Canvas tote\", \"price\": 24}]";

static int fail(const char *what, sitefile_status status) {
  fprintf(stderr, "%s: %s: %s\n", what, sitefile_status_name((int)status), sitefile_last_error());
  return 1;
}

int main(void) {
  sitefile_site *site = NULL;
  sitefile_status status = sitefile_site_from_dir("my-site", NULL, &site);
  if (status != SITEFILE_STATUS_OK) return fail("my-site", status);

  sitefile_resolution *res = NULL;
  status = sitefile_resolve_begin(site, "{\"url\": \"https://my-site.example/\"}", NULL, &res);
  if (status != SITEFILE_STATUS_OK) {
    sitefile_site_free(site);
    return fail("resolve", status);
  }

  /* Each step is {"step":"needLoaders","value":[{"id":0,"key":...,"props":...}, ...]} (run
   * those loaders, answer each call) or {"step":"done","value":<the page>}. */
  char *step = NULL;
  while ((status = sitefile_resolution_next(res, &step)) == SITEFILE_STATUS_OK &&
         strstr(step, "{\"step\":\"needLoaders\"") == step) {
    for (const char *call = strstr(step, "{\"id\":"); call != NULL && status == SITEFILE_STATUS_OK;
         call = strstr(call + 1, "{\"id\":")) {
      size_t id = strtoul(call + strlen("{\"id\":"), NULL, 10);
      status = sitefile_resolution_provide(res, id, PRODUCTS, NULL);
    }
    sitefile_string_free(step);
    step = NULL;
    if (status != SITEFILE_STATUS_OK) break;
  }

  int failed = 0;
  if (status == SITEFILE_STATUS_OK) {
    puts(step);
  } else {
    failed = fail("resolution", status);
  }
  sitefile_string_free(step);
  sitefile_resolution_free(res);
  sitefile_site_free(site);
  return failed;
}
