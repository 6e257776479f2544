/*
 * One sitefile_site shared by several threads: RESOLVERS threads resolve pages (each answering
 * a loader round) while one thread reloads the content RELOADS times. Every reload sets the
 * blocks A and B to the same version vN in one delta; every page must name the revision it
 * used, show A and B at the same version, and that version must be the one the reload that
 * made the revision wrote — never a mix of two revisions. All resolvers share one sitefile_host
 * whose custom matcher must be called on the resolving thread, inside sitefile_resolve_begin.
 * Each thread's sitefile_last_error is its own. Run by ffi/tests/c_api.rs, under valgrind by
 * ffi/tests/valgrind.rs and under ThreadSanitizer by ffi/tests/tsan.rs:
 * `threads [ROUNDS]` — each resolver resolves at least ROUNDS pages.
 */
#define _POSIX_C_SOURCE 200809L
#include "sitefile.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RESOLVERS 4
#define RELOADS 20
#define REVISION_LEN 64
#define MAX_SEEN 4096

static atomic_int failures = 0;
static atomic_int reloading_done = 0;
static atomic_int started = 0;
static atomic_int matcher_calls = 0;
/* Set by a resolver thread around its sitefile_resolve_begin calls. */
static _Thread_local int resolving = 0;

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
      atomic_fetch_add(&failures, 1);                                            \
    }                                                                            \
  } while (0)

/* The revision each reload made, and the version it wrote (index 0: the initial content). */
static char revisions[RELOADS + 1][REVISION_LEN + 1];

typedef struct {
  char revision[REVISION_LEN + 1];
  int version;
} sighting;

typedef struct {
  sitefile_site *site;
  const sitefile_host *host;
  int rounds;
  int seen_count;
  sighting seen[MAX_SEEN];
} resolver;

static const char *CONTENT =
    "{\"pages-home\": {\"path\": \"/\", \"sections\": ["
    "{\"__resolveType\": \"A\"}, {\"__resolveType\": \"B\"}, "
    "{\"__resolveType\": \"website/flags/multivariate.ts\", \"variants\": ["
    "{\"rule\": {\"__resolveType\": \"site/matchers/thread.ts\"}, "
    "\"value\": {\"__resolveType\": \"site/sections/Matched.tsx\"}}]}, "
    "{\"__resolveType\": \"site/sections/Echo.tsx\", "
    "\"data\": {\"__resolveType\": \"site/loaders/echo.ts\", \"n\": 1}}]}, "
    "\"A\": {\"__resolveType\": \"site/sections/A.tsx\", \"version\": 0}, "
    "\"B\": {\"__resolveType\": \"site/sections/B.tsx\", \"version\": 0}}";

/* Copies the 64 hex digits after `"revision":"` in `json` into `out`. */
static int revision_of(const char *json, char *out) {
  const char *p = json != NULL ? strstr(json, "\"revision\":\"") : NULL;
  if (p == NULL) return 0;
  p += strlen("\"revision\":\"");
  const char *end = strchr(p, '"');
  if (end == NULL || end - p != REVISION_LEN) return 0;
  memcpy(out, p, REVISION_LEN);
  out[REVISION_LEN] = '\0';
  return 1;
}

/* The version of section `component` in a page, or -1. */
static int version_of(const char *page, const char *component) {
  char needle[128];
  snprintf(needle, sizeof needle, "\"component\":\"%s\",\"props\":{\"version\":", component);
  const char *p = strstr(page, needle);
  return p == NULL ? -1 : atoi(p + strlen(needle));
}

/* The shared host's matcher: it runs on the thread that is inside sitefile_resolve_begin. */
static void on_resolving_thread(void *user_data, const char *key, const char *rule_json,
                                const char *context_json, sitefile_answer *answer) {
  (void)user_data, (void)key, (void)rule_json, (void)context_json;
  atomic_fetch_add(&matcher_calls, 1);
  if (resolving) {
    sitefile_answer_bool(answer, 1);
  } else {
    sitefile_answer_error(answer, "called outside sitefile_resolve_begin or on another thread");
  }
}

static void pause_briefly(void) {
  struct timespec t = {0, 200000}; /* 0.2 ms */
  nanosleep(&t, NULL);
}

static void *reload(void *arg) {
  sitefile_site *site = arg;
  while (atomic_load(&started) < RESOLVERS) pause_briefly();
  for (int n = 1; n <= RELOADS; n++) {
    char body[256];
    snprintf(body, sizeof body,
             "{\"blocks\": {\"A\": {\"__resolveType\": \"site/sections/A.tsx\", \"version\": %d}, "
             "\"B\": {\"__resolveType\": \"site/sections/B.tsx\", \"version\": %d}}}",
             n, n);
    char *response = NULL;
    sitefile_status status =
        sitefile_site_reload(site, (const uint8_t *)body, strlen(body), 1700000000000 + n, &response);
    CHECK(status == SITEFILE_STATUS_OK);
    CHECK(revision_of(response, revisions[n]));
    sitefile_string_free(response);
    for (int i = 0; i < 5; i++) pause_briefly();
  }
  atomic_store(&reloading_done, 1);
  return NULL;
}

/* Resolves "/" once, answering its loader round; records what the page used. */
static void resolve_once(resolver *r) {
  sitefile_resolution *res = NULL;
  resolving = 1;
  sitefile_status status =
      sitefile_resolve_begin(r->site, "{\"url\": \"https://threads.example/\"}", r->host, &res);
  resolving = 0;
  CHECK(status == SITEFILE_STATUS_OK);
  if (res == NULL) return;
  char *step = NULL;
  for (int round = 0; round < 4; round++) {
    CHECK(sitefile_resolution_next(res, &step) == SITEFILE_STATUS_OK);
    if (step == NULL || strstr(step, "\"step\":\"needLoaders\"") == NULL) break;
    const char *p = strstr(step, "{\"id\":");
    CHECK(p != NULL);
    if (p != NULL) {
      CHECK(sitefile_resolution_provide(res, strtoul(p + 6, NULL, 10), "{\"echo\": true}", NULL) ==
            SITEFILE_STATUS_OK);
    }
    sitefile_string_free(step);
    step = NULL;
  }
  CHECK(step != NULL && strstr(step, "\"step\":\"done\"") != NULL);
  CHECK(step != NULL && strstr(step, "\"data\":{\"echo\":true}") != NULL);
  CHECK(step != NULL && strstr(step, "\"component\":\"site/sections/Matched.tsx\"") != NULL);
  CHECK(step != NULL && strstr(step, "\"errors\"") == NULL);
  if (step != NULL && r->seen_count < MAX_SEEN) {
    sighting *s = &r->seen[r->seen_count];
    int a = version_of(step, "site/sections/A.tsx");
    int b = version_of(step, "site/sections/B.tsx");
    CHECK(a >= 0 && a == b);
    CHECK(revision_of(step, s->revision));
    s->version = a;
    r->seen_count++;
  }
  sitefile_string_free(step);
  sitefile_resolution_free(res);
}

static void *resolve(void *arg) {
  resolver *r = arg;
  atomic_fetch_add(&started, 1);
  for (int i = 0; i < r->rounds || !atomic_load(&reloading_done); i++) {
    resolve_once(r);
    if (i % 16 == 0) {
      /* The last error is this thread's, whatever the others do meanwhile. */
      sitefile_resolution *res = NULL;
      CHECK(sitefile_resolve_begin(r->site, NULL, NULL, &res) == SITEFILE_STATUS_NULL_ARGUMENT);
      pause_briefly();
      CHECK(strcmp(sitefile_last_error(), "request_json is NULL") == 0);
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 50;
  sitefile_site *site = NULL;
  sitefile_host *host = NULL;
  CHECK(sitefile_host_new(&host) == SITEFILE_STATUS_OK);
  CHECK(sitefile_host_register_matcher(host, "site/matchers/thread.ts", on_resolving_thread,
                                       NULL) == SITEFILE_STATUS_OK);
  if (sitefile_site_from_content(CONTENT, "{\"customMatchers\": [\"site/matchers/thread.ts\"]}",
                                 &site) != SITEFILE_STATUS_OK) {
    fprintf(stderr, "cannot load the content: %s\n", sitefile_last_error());
    sitefile_host_free(host);
    return 1;
  }
  char *initial = NULL;
  CHECK(sitefile_site_revision(site, &initial) == SITEFILE_STATUS_OK);
  CHECK(initial != NULL && strlen(initial) == REVISION_LEN);
  if (initial != NULL) snprintf(revisions[0], sizeof revisions[0], "%s", initial);
  sitefile_string_free(initial);

  static resolver resolvers[RESOLVERS];
  pthread_t threads[RESOLVERS + 1];
  for (int i = 0; i < RESOLVERS; i++) {
    resolvers[i].site = site;
    resolvers[i].host = host;
    resolvers[i].rounds = rounds;
    CHECK(pthread_create(&threads[i], NULL, resolve, &resolvers[i]) == 0);
  }
  CHECK(pthread_create(&threads[RESOLVERS], NULL, reload, site) == 0);
  for (int i = 0; i <= RESOLVERS; i++) pthread_join(threads[i], NULL);

  /* Every page's revision is one a reload made (or the initial one), with that reload's
   * version in both blocks. */
  int pages = 0, distinct = 0;
  int used[RELOADS + 1] = {0};
  for (int i = 0; i < RESOLVERS; i++) {
    for (int j = 0; j < resolvers[i].seen_count; j++) {
      const sighting *s = &resolvers[i].seen[j];
      pages++;
      int n = 0;
      while (n <= RELOADS && strcmp(revisions[n], s->revision) != 0) n++;
      if (n > RELOADS) {
        fprintf(stderr, "a page names revision %s, which no reload made\n", s->revision);
        atomic_fetch_add(&failures, 1);
      } else if (s->version != n) {
        fprintf(stderr, "revision %d served version %d\n", n, s->version);
        atomic_fetch_add(&failures, 1);
      } else if (!used[n]++) {
        distinct++;
      }
    }
  }
  /* The resolvers ran across the reloads: they saw several revisions, and the last one. */
  CHECK(distinct >= 2);
  CHECK(pages >= RESOLVERS * rounds);
  CHECK(atomic_load(&matcher_calls) >= pages); /* one call per page, none cached */
  char *last = NULL;
  CHECK(sitefile_site_revision(site, &last) == SITEFILE_STATUS_OK);
  CHECK(last != NULL && strcmp(last, revisions[RELOADS]) == 0);
  sitefile_string_free(last);
  sitefile_site_free(site);
  sitefile_host_free(host);

  if (atomic_load(&failures) > 0) {
    fprintf(stderr, "%d check(s) failed\n", atomic_load(&failures));
    return 1;
  }
  printf("sitefile C threads: %d pages over %d revisions (%d matcher calls), none mixed; all "
         "checks passed\n",
         pages, distinct, atomic_load(&matcher_calls));
  return 0;
}
