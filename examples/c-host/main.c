/*
 * c-host: embeds sitefile in a C program through include/sitefile.h and libsitefile.
 *
 *   c-host [SITE_DIR [URL]]     (defaults: ../storefront, https://storefront.example/shoes)
 *
 * It loads the site, begins resolving the page for URL, answers each round of loader calls
 * with canned data (a real host would call its commerce platform here), and prints the page
 * JSON (with its effects) on stdout. The loader calls are read out of the step JSON with a small scanner to keep the
 * example free of dependencies; a real host reads them with its JSON library.
 */
#include <sitefile.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Canned loader results, by loader key. */
static const struct {
  const char *key;
  const char *json;
} canned[] = {
    {"vtex/loaders/intelligentSearch/productListingPage.ts",
     "{\"products\": [{\"name\": \"Trail runner\", \"price\": 89.9}, "
     "{\"name\": \"City sneaker\", \"price\": 64.5}], \"pageInfo\": {\"records\": 2}}"},
    {"vtex/loaders/intelligentSearch/productList.ts",
     "[{\"name\": \"Canvas tote\", \"price\": 24.0}, {\"name\": \"Trail runner\", \"price\": 89.9}]"},
    {"vtex/loaders/intelligentSearch/productDetailsPage.ts",
     "{\"product\": {\"name\": \"Trail runner\", \"price\": 89.9}}"},
};

static const char *canned_result(const char *key, size_t key_len) {
  for (size_t i = 0; i < sizeof canned / sizeof canned[0]; i++) {
    if (strlen(canned[i].key) == key_len && strncmp(canned[i].key, key, key_len) == 0) {
      return canned[i].json;
    }
  }
  return NULL;
}

static int fail(const char *what, sitefile_status status) {
  fprintf(stderr, "c-host: %s: %s: %s\n", what, sitefile_status_name((int)status),
          sitefile_last_error());
  return 1;
}

/* Answers every call of a needLoaders step: each call is serialised {"id":N,"key":"K",...}. */
static int answer_round(sitefile_resolution *res, const char *step) {
  const char *p = step;
  while ((p = strstr(p, "{\"id\":")) != NULL) {
    char *end = NULL;
    unsigned long id = strtoul(p + 6, &end, 10);
    p += 6;
    if (end == p || strncmp(end, ",\"key\":\"", 8) != 0) continue;
    const char *key = end + 8;
    const char *key_end = strchr(key, '"');
    if (key_end == NULL) break;
    const char *result = canned_result(key, (size_t)(key_end - key));
    fprintf(stderr, "c-host: loader %.*s (call %lu): %s\n", (int)(key_end - key), key, id,
            result != NULL ? "canned data" : "no data");
    sitefile_status status =
        result != NULL ? sitefile_resolution_provide(res, (size_t)id, result, NULL)
                       : sitefile_resolution_provide(res, (size_t)id, NULL,
                                                     "c-host has no canned data for this loader");
    if (status != SITEFILE_STATUS_OK) return fail("provide", status);
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "../storefront";
  const char *url = argc > 2 ? argv[2] : "https://storefront.example/shoes";

  sitefile_site *site = NULL;
  sitefile_status status = sitefile_site_from_dir(dir, NULL, &site);
  if (status != SITEFILE_STATUS_OK) return fail(dir, status);

  /* The request as JSON; a URL holding '"' or '\' would need escaping. */
  char request[2048];
  if (strpbrk(url, "\"\\") != NULL ||
      snprintf(request, sizeof request, "{\"url\": \"%s\", \"method\": \"GET\"}", url) >=
          (int)sizeof request) {
    fprintf(stderr, "c-host: unusable URL %s\n", url);
    sitefile_site_free(site);
    return 2;
  }
  sitefile_resolution *res = NULL;
  status = sitefile_resolve_begin(site, request, NULL, &res);
  if (status != SITEFILE_STATUS_OK) {
    sitefile_site_free(site);
    return fail("resolve", status);
  }

  int failed = 0;
  char *step = NULL;
  for (;;) {
    status = sitefile_resolution_next(res, &step);
    if (status != SITEFILE_STATUS_OK) {
      failed = fail("next", status);
      break;
    }
    if (strncmp(step, "{\"step\":\"done\",", 15) == 0) break;
    failed = answer_round(res, step);
    sitefile_string_free(step);
    step = NULL;
    if (failed) break;
  }
  if (!failed) {
    /* The done step is {"step":"done","value":<page>}: print the page as the library wrote it. */
    const char *prefix = "{\"step\":\"done\",\"value\":";
    size_t len = strlen(step), skip = strlen(prefix);
    printf("%.*s\n", (int)(len - skip - 1), step + skip);
  }

  sitefile_string_free(step);
  sitefile_resolution_free(res);
  sitefile_site_free(site);
  return failed;
}
