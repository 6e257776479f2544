/*
 * What the C test programs share: a failure count, CHECK for a condition, EXPECT for a call's
 * status and the thread's last error, `contains`, and the ids of a loader round. Included by
 * each test program.
 */
#ifndef SITEFILE_TEST_CHECK_H
#define SITEFILE_TEST_CHECK_H

#include "sitefile.h"

#include <stdio.h>
#include <stdlib.h>
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

static inline int contains(const char *haystack, const char *needle) {
  return haystack != NULL && strstr(haystack, needle) != NULL;
}

/* Whether a step (JSON) is a loader round rather than the finished page. */
static inline int is_loader_round(const char *step) {
  static const char round[] = "{\"step\":\"needLoaders\"";
  return step != NULL && strncmp(step, round, sizeof round - 1) == 0;
}

/* The ids of a needLoaders step, in order: each call is serialised as {"id":N,"key":...}. */
static inline size_t call_ids(const char *step, size_t *ids, size_t max) {
  size_t n = 0;
  const char *p = step;
  while (n < max && (p = strstr(p, "{\"id\":")) != NULL) {
    char *end = NULL;
    unsigned long id = strtoul(p + 6, &end, 10);
    if (end != p + 6 && strncmp(end, ",\"key\":", 7) == 0) {
      ids[n++] = (size_t)id;
    }
    p += 6;
  }
  return n;
}

#endif
