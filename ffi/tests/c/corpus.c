/*
 * Every corpus page through the C API: `corpus <site dir> <requests file>` loads the site,
 * resolves the request form on each line of the file (every loader answered {"stub":true}) and
 * prints each finished step's JSON on a line of its own, exactly as the library returned it.
 * Run by ffi/tests/corpus.rs, which compares each line with the Rust API's bytes.
 */
#define _POSIX_C_SOURCE 200809L

#include "sitefile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAX_CALLS 256
#define MAX_ROUNDS 16

/* Resolves one request form to its finished step, printed on one line. */
static void resolve_line(sitefile_site *site, const char *form) {
  sitefile_resolution *res = NULL;
  EXPECT(sitefile_resolve_begin(site, form, NULL, &res), SITEFILE_STATUS_OK, "");
  if (res == NULL) return;
  char *step = NULL;
  for (int round = 0; round <= MAX_ROUNDS; round++) {
    EXPECT(sitefile_resolution_next(res, &step), SITEFILE_STATUS_OK, "");
    /* The length the library keeps is the string's. */
    CHECK(step != NULL && sitefile_string_len(step) == strlen(step));
    if (step == NULL || !is_loader_round(step)) break;
    size_t ids[MAX_CALLS];
    size_t n = call_ids(step, ids, MAX_CALLS);
    CHECK(n > 0 && n < MAX_CALLS);
    for (size_t i = 0; i < n; i++) {
      EXPECT(sitefile_resolution_provide(res, ids[i], "{\"stub\":true}", NULL), SITEFILE_STATUS_OK,
             "");
    }
    sitefile_string_free(step);
    step = NULL;
  }
  CHECK(step != NULL && !is_loader_round(step));
  if (step != NULL) {
    fputs(step, stdout);
    fputc('\n', stdout);
  }
  sitefile_string_free(step);
  sitefile_resolution_free(res);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s <site dir> <requests file>\n", argv[0]);
    return 2;
  }
  sitefile_site *site = NULL;
  if (sitefile_site_from_dir(argv[1], NULL, &site) != SITEFILE_STATUS_OK) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], sitefile_last_error());
    return 1;
  }
  FILE *requests = fopen(argv[2], "r");
  if (requests == NULL) {
    perror(argv[2]);
    sitefile_site_free(site);
    return 1;
  }
  char *line = NULL;
  size_t capacity = 0;
  ssize_t length;
  while ((length = getline(&line, &capacity, requests)) > 0) {
    if (line[length - 1] == '\n') line[length - 1] = '\0';
    resolve_line(site, line);
  }
  free(line);
  fclose(requests);
  sitefile_site_free(site);
  if (failures > 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  return 0;
}
