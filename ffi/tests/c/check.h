/*
 * What the C test programs share: a failure count, CHECK for a condition, EXPECT for a call's
 * status and the thread's last error, and `contains`. Included by each test program.
 */
#ifndef SITEFILE_TEST_CHECK_H
#define SITEFILE_TEST_CHECK_H

#include "sitefile.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
      failures++;                                                                \
    }                                                                            \
  } while (0)

/* The call returned `want`, and the thread's last error contains `message` ("" after OK). */
static void expect(sitefile_status got, sitefile_status want, const char *message, int line) {
  const char *last = sitefile_last_error();
  if (got != want) {
    fprintf(stderr, "line %d: status %s, want %s (last error: %s)\n", line,
            sitefile_status_name((int)got), sitefile_status_name((int)want), last);
    failures++;
    return;
  }
  if (last == NULL) {
    fprintf(stderr, "line %d: sitefile_last_error() is NULL\n", line);
    failures++;
  } else if (want == SITEFILE_STATUS_OK ? last[0] != '\0' : strstr(last, message) == NULL) {
    fprintf(stderr, "line %d: last error \"%s\", want \"%s\"\n", line, last, message);
    failures++;
  }
}
#define EXPECT(call, want, message) expect((call), (want), (message), __LINE__)

static int contains(const char *haystack, const char *needle) {
  return haystack != NULL && strstr(haystack, needle) != NULL;
}

#endif
