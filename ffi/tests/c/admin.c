/*
 * The admin protocol and the edge through the C API: every kind of admin request (answered, a
 * reload with and without the Fast Deploy hook, a purge, a preview rendered by the host, an
 * invoke run by the host, a path that is not an admin route), the edge plan and the decisions
 * after the origin, the edge exchange driven step by step (a miss stored, a collapsed miss, a
 * hit), and the error paths (NULL arguments, bad JSON, the wrong or a second finish, an answer
 * out of order). Every handle and string is freed. Run by ffi/tests/c_api.rs and under valgrind.
 */
#include "sitefile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const char *CONTENT =
    "{\"pages-home\": {\"__resolveType\": \"website/pages/Page.tsx\", \"path\": \"/\", "
    "\"sections\": [{\"__resolveType\": \"site/sections/Hero.tsx\", \"title\": \"Home\"}]}, "
    "\"Header\": {\"__resolveType\": \"site/sections/Header.tsx\", \"title\": \"saved\"}}";

static const char *SETUP =
    "{\"loaders\": [\"site/loaders/products.ts\"], \"env\": {\"PLATFORM_RELEASE_RELOAD_TOKEN\": "
    "\"s3cret\", \"PURGE_TOKEN\": \"p-token\"}}";

static const int64_t NOW_MS = 1780000000000;

/* Begins an admin request with no query. */
static sitefile_admin *begin(sitefile_site *site, const char *method, const char *path,
                             const char *headers, const char *body) {
  sitefile_admin *admin = NULL;
  EXPECT(sitefile_admin_begin(site, method, path, NULL, headers, (const uint8_t *)body,
                              body ? strlen(body) : 0, NOW_MS, false, &admin),
         SITEFILE_STATUS_OK, "");
  CHECK(admin != NULL);
  return admin;
}

/* The body of a response as a NUL-terminated copy (free it). */
static char *body_of(const sitefile_response *response) {
  size_t len = 0;
  const uint8_t *bytes = sitefile_response_body(response, &len);
  char *copy = malloc(len + 1);
  if (copy == NULL) abort();
  if (len > 0) memcpy(copy, bytes, len);
  copy[len] = '\0';
  return copy;
}

static void answered(sitefile_site *site) {
  sitefile_admin *admin = begin(site, "GET", "/.sitefile", "[[\"Authorization\", \"s3cret\"]]", NULL);
  CHECK(sitefile_admin_kind_of(admin) == SITEFILE_ADMIN_KIND_RESPOND);
  char *job = (char *)"unset";
  EXPECT(sitefile_admin_job(admin, &job), SITEFILE_STATUS_OK, "");
  CHECK(job == NULL);
  sitefile_response *response = NULL;
  EXPECT(sitefile_admin_response(admin, &response), SITEFILE_STATUS_OK, "");
  CHECK(sitefile_response_status(response) == 200);
  CHECK(contains(sitefile_response_headers(response), "\"application/json"));
  char *body = body_of(response);
  CHECK(contains(body, "\"pages-home\""));
  free(body);
  sitefile_response_free(response);
  /* Finished once: a second finish is FINISHED and writes nothing. */
  response = NULL;
  EXPECT(sitefile_admin_response(admin, &response), SITEFILE_STATUS_FINISHED, "already finished");
  CHECK(response == NULL);
  sitefile_admin_free(admin);

  /* A reload without the token is answered at once: 401. */
  admin = begin(site, "POST", "/.sitefile", NULL, "{\"blocks\": {}}");
  CHECK(sitefile_admin_kind_of(admin) == SITEFILE_ADMIN_KIND_RESPOND);
  EXPECT(sitefile_admin_response(admin, &response), SITEFILE_STATUS_OK, "");
  CHECK(sitefile_response_status(response) == 401);
  sitefile_response_free(response);
  sitefile_admin_free(admin);
}

typedef struct {
  int calls;
  char revision[80];
  int refuse;
} hook_state;

static void swap_hook(void *user_data, const char *revision, sitefile_answer *answer) {
  hook_state *state = user_data;
  state->calls++;
  snprintf(state->revision, sizeof state->revision, "%s", revision);
  if (state->refuse) {
    sitefile_answer_error(answer, "the key-value store is down");
  } else {
    sitefile_answer_bool(answer, true);
  }
}

static void reload(sitefile_site *site) {
  const char *auth = "[[\"Authorization\", \"s3cret\"]]";
  const char *body = "{\"blocks\": {\"Notice\": {\"text\": \"new\"}}}";

  /* A refusing hook: 503, the content unchanged. */
  hook_state refused = {0, "", 1};
  sitefile_admin *admin = begin(site, "POST", "/.sitefile", auth, body);
  CHECK(sitefile_admin_kind_of(admin) == SITEFILE_ADMIN_KIND_RELOAD);
  sitefile_response *response = NULL;
  EXPECT(sitefile_admin_apply_reload(admin, swap_hook, &refused, &response), SITEFILE_STATUS_OK, "");
  CHECK(sitefile_response_status(response) == 503);
  CHECK(refused.calls == 1);
  sitefile_response_free(response);
  sitefile_admin_free(admin);
  char *block = NULL;
  EXPECT(sitefile_site_block(site, "Notice", &block), SITEFILE_STATUS_OK, "");
  CHECK(block == NULL);

  /* A writing hook: kvWritten, the new revision given to the hook is the one serving. */
  hook_state written = {0, "", 0};
  admin = begin(site, "POST", "/.sitefile", auth, body);
  EXPECT(sitefile_admin_apply_reload(admin, swap_hook, &written, &response), SITEFILE_STATUS_OK, "");
  CHECK(sitefile_response_status(response) == 200);
  char *text = body_of(response);
  CHECK(contains(text, "\"kvWritten\":true"));
  free(text);
  sitefile_response_free(response);
  sitefile_admin_free(admin);
  CHECK(written.calls == 1);
  char *revision = NULL;
  EXPECT(sitefile_site_revision(site, &revision), SITEFILE_STATUS_OK, "");
  CHECK(revision != NULL && strcmp(revision, written.revision) == 0);
  sitefile_string_free(revision);
  EXPECT(sitefile_site_block(site, "Notice", &block), SITEFILE_STATUS_OK, "");
  CHECK(contains(block, "\"new\""));
  sitefile_string_free(block);

  /* The same hook on the site call; a body that is no reload is refused, content kept. */
  char *json = NULL;
  const char *more = "{\"blocks\": {\"Notice\": {\"text\": \"newer\"}}}";
  EXPECT(sitefile_site_reload_with_hook(site, (const uint8_t *)more, strlen(more), NOW_MS, swap_hook,
                                        &written, &json),
         SITEFILE_STATUS_OK, "");
  CHECK(contains(json, "\"kvWritten\":true") && written.calls == 2);
  sitefile_string_free(json);
  EXPECT(sitefile_site_reload_with_hook(site, (const uint8_t *)"[1]", 3, NOW_MS, swap_hook, &written,
                                        &json),
         SITEFILE_STATUS_INVALID_CONTENT, "");
  CHECK(json == NULL && written.calls == 2);
  refused.calls = 0;
  EXPECT(sitefile_site_reload_with_hook(site, (const uint8_t *)body, strlen(body), NOW_MS, swap_hook,
                                        &refused, &json),
         SITEFILE_STATUS_HOOK_FAILED, "the key-value store is down");
  CHECK(json == NULL && refused.calls == 1);
}

static void purge(sitefile_site *site) {
  sitefile_admin *admin = begin(site, "POST", "/_cache/purge", "[[\"Authorization\", \"Bearer p-token\"]]",
                                "{\"paths\": [\"/p\"]}");
  CHECK(sitefile_admin_kind_of(admin) == SITEFILE_ADMIN_KIND_PURGE);
  char *job = NULL;
  EXPECT(sitefile_admin_job(admin, &job), SITEFILE_STATUS_OK, "");
  CHECK(contains(job, "\"keys\":["));
  sitefile_string_free(job);
  /* The wrong finish leaves the request as it was. */
  sitefile_response *response = NULL;
  EXPECT(sitefile_admin_response(admin, &response), SITEFILE_STATUS_INVALID_REQUEST,
         "does not finish");
  EXPECT(sitefile_admin_finish_purge(admin, &response), SITEFILE_STATUS_OK, "");
  CHECK(sitefile_response_status(response) == 200);
  sitefile_response_free(response);
  sitefile_admin_free(admin);
}

static void preview(sitefile_site *site) {
  sitefile_admin *admin = NULL;
  EXPECT(sitefile_admin_begin(site, "GET", "/live/previews/site%2Fsections%2FHero.tsx",
                              "props=%7B%22title%22%3A%22Hi%22%7D", NULL, NULL, 0, NOW_MS, false,
                              &admin),
         SITEFILE_STATUS_OK, "");
  CHECK(sitefile_admin_kind_of(admin) == SITEFILE_ADMIN_KIND_PREVIEW);
  char *job = NULL;
  EXPECT(sitefile_admin_job(admin, &job), SITEFILE_STATUS_OK, "");
  CHECK(contains(job, "\"component\":\"site/sections/Hero.tsx\""));
  sitefile_string_free(job);
  sitefile_resolution *res = NULL;
  EXPECT(sitefile_admin_resolve_preview(admin, NULL, &res), SITEFILE_STATUS_OK, "");
  char *step = NULL;
  EXPECT(sitefile_resolution_next(res, &step), SITEFILE_STATUS_OK, "");
  CHECK(contains(step, "\"title\":\"Hi\""));
  sitefile_string_free(step);
  sitefile_resolution_free(res);
  sitefile_response *response = NULL;
  EXPECT(sitefile_admin_finish_preview(admin, "{not json", &response), SITEFILE_STATUS_INVALID_JSON,
         "invalid render answer");
  EXPECT(sitefile_admin_finish_preview(
             admin, "{\"sections\": [{\"key\": \"site/sections/Hero.tsx\", \"html\": \"<h1>Hi</h1>\"}]}",
             &response),
         SITEFILE_STATUS_OK, "");
  CHECK(sitefile_response_status(response) == 200);
  char *html = body_of(response);
  CHECK(contains(html, "<h1>Hi</h1>") && contains(html, "data-manifest-key"));
  free(html);
  sitefile_response_free(response);
  EXPECT(sitefile_admin_resolve_preview(admin, NULL, &res), SITEFILE_STATUS_INVALID_REQUEST, "");
  CHECK(res == NULL);
  sitefile_admin_free(admin);
}

static void invoke(sitefile_site *site) {
  sitefile_admin *admin =
      begin(site, "POST", "/platform/invoke/site/loaders/products.ts", NULL, "{\"count\": 2}");
  CHECK(sitefile_admin_kind_of(admin) == SITEFILE_ADMIN_KIND_INVOKE);
  char *job = NULL;
  EXPECT(sitefile_admin_job(admin, &job), SITEFILE_STATUS_OK, "");
  CHECK(contains(job, "\"key\":\"site/loaders/products.ts\"") && contains(job, "\"count\":2"));
  sitefile_string_free(job);
  sitefile_response *response = NULL;
  EXPECT(sitefile_admin_finish_invoke(admin, "[{\"value\": [1, 2]}]", "[[\"x-loader\", \"ran\"]]",
                                      &response),
         SITEFILE_STATUS_OK, "");
  CHECK(sitefile_response_status(response) == 200);
  CHECK(contains(sitefile_response_headers(response), "[\"x-loader\",\"ran\"]"));
  char *body = body_of(response);
  CHECK(strcmp(body, "[1,2]") == 0);
  free(body);
  sitefile_response_free(response);
  sitefile_admin_free(admin);
}

static void pass_and_errors(sitefile_site *site) {
  sitefile_admin *admin = begin(site, "GET", "/some/page", NULL, NULL);
  CHECK(sitefile_admin_kind_of(admin) == SITEFILE_ADMIN_KIND_PASS);
  sitefile_response *response = NULL;
  EXPECT(sitefile_admin_response(admin, &response), SITEFILE_STATUS_INVALID_REQUEST,
         "does not finish");
  sitefile_admin_free(admin);

  /* As the edge serves it, without the `admin` option only purges are admin routes. */
  admin = NULL;
  EXPECT(sitefile_admin_begin(site, "GET", "/.sitefile", NULL, NULL, NULL, 0, NOW_MS, true, &admin),
         SITEFILE_STATUS_OK, "");
  CHECK(sitefile_admin_kind_of(admin) == SITEFILE_ADMIN_KIND_PASS);
  sitefile_admin_free(admin);

  admin = NULL;
  EXPECT(sitefile_admin_begin(site, "GET", "/.sitefile", NULL, "{not json", NULL, 0, NOW_MS, false,
                              &admin),
         SITEFILE_STATUS_INVALID_JSON, "invalid headers");
  CHECK(admin == NULL);
  EXPECT(sitefile_admin_begin(site, NULL, "/x", NULL, NULL, NULL, 0, NOW_MS, false, &admin),
         SITEFILE_STATUS_NULL_ARGUMENT, "method is NULL");
  EXPECT(sitefile_admin_begin(site, "POST", "/x", NULL, NULL, NULL, 4, NOW_MS, false, &admin),
         SITEFILE_STATUS_NULL_ARGUMENT, "body is NULL");
  EXPECT(sitefile_admin_begin(NULL, "GET", "/x", NULL, NULL, NULL, 0, NOW_MS, false, &admin),
         SITEFILE_STATUS_NULL_ARGUMENT, "site is NULL");
  EXPECT(sitefile_admin_response(NULL, &response), SITEFILE_STATUS_NULL_ARGUMENT, "admin is NULL");
  /* NULL has a kind of its own, no live request's (PASS is 0). */
  CHECK(sitefile_admin_kind_of(NULL) == SITEFILE_ADMIN_KIND_NONE);
  CHECK(SITEFILE_ADMIN_KIND_NONE != SITEFILE_ADMIN_KIND_PASS);
  CHECK(sitefile_response_status(NULL) == 0);
  CHECK(sitefile_response_headers(NULL) == NULL);
  size_t len = 7;
  CHECK(sitefile_response_body(NULL, &len) == NULL && len == 0);
  sitefile_admin_free(NULL);
  sitefile_response_free(NULL);
}

/* An origin header that could split or smuggle a response (a CR, LF or NUL in its value, a name
 * that is no HTTP token) is refused as hyper and nginx refuse it (the host answers 502), never
 * passed on to the visitor or into a stored copy; a tab and non-ASCII text are fine. */
static void origin_headers(sitefile_edge_plan *plan) {
  static const char *const refused[] = {
      "{\"status\": 200, \"headers\": [[\"x-evil\", \"a\\r\\nSet-Cookie: session=stolen\"]]}",
      "{\"status\": 200, \"headers\": [[\"x-evil\", \"a\\nb\"]]}",
      "{\"status\": 200, \"headers\": [[\"x-evil\", \"a\\rb\"]]}",
      "{\"status\": 200, \"headers\": [[\"x-evil\", \"a\\u0000b\"]]}",
      "{\"status\": 200, \"headers\": [[\"x-evil\", \"a\\u007fb\"]]}",
      "{\"status\": 200, \"headers\": [[\"x-evil\\r\\nset-cookie\", \"a\"]]}",
      "{\"status\": 200, \"headers\": [[\"x-evil: a\", \"b\"]]}",
      "{\"status\": 200, \"headers\": [[\"x evil\", \"b\"]]}",
      "{\"status\": 200, \"headers\": [[\"\", \"b\"]]}",
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    char *json = (char *)0x1;
    EXPECT(sitefile_edge_after_origin(plan, refused[i], &json), SITEFILE_STATUS_INVALID_JSON,
           "header");
    CHECK(json == NULL);
    json = (char *)0x1;
    EXPECT(sitefile_edge_stored_copy(plan, 0, true, refused[i], &json),
           SITEFILE_STATUS_INVALID_JSON, "header");
    CHECK(json == NULL);
  }
  char *json = NULL;
  EXPECT(sitefile_edge_after_origin(plan, "{\"status\": 500, \"headers\": [[\"x-evil\", \"a\\rb\"]]}",
                                    &json),
         SITEFILE_STATUS_INVALID_JSON, "x-evil");
  CHECK(json == NULL);
  EXPECT(sitefile_edge_after_origin(
             plan, "{\"status\": 200, \"headers\": [[\"X-Note\", \"caf\u00e9\\tau lait\"]]}", &json),
         SITEFILE_STATUS_OK, "");
  CHECK(contains(json, "\"X-Note\",\"caf\u00e9\\tau lait\""));
  sitefile_string_free(json);
}

static void edge(sitefile_site *site) {
  const char *request =
      "{\"url\": \"https://site.example/\", \"headers\": [[\"user-agent\", \"Mozilla/5.0\"]]}";
  sitefile_edge_plan *plan = NULL;
  EXPECT(sitefile_edge_plan_new(site, request, NULL, &plan), SITEFILE_STATUS_OK, "");
  char *json = NULL;
  EXPECT(sitefile_edge_plan_json(plan, &json), SITEFILE_STATUS_OK, "");
  CHECK(contains(json, "\"action\":\"cache\"") && contains(json, "\"key\":"));
  sitefile_string_free(json);

  EXPECT(sitefile_edge_after_origin(
             plan, "{\"status\": 200, \"headers\": [[\"content-type\", \"text/html\"]]}", &json),
         SITEFILE_STATUS_OK, "");
  CHECK(contains(json, "\"storeHeaders\":[") && contains(json, "\"storeMaxAge\":"));
  sitefile_string_free(json);

  EXPECT(sitefile_edge_stored_copy(plan, 0, false, NULL, &json), SITEFILE_STATUS_OK, "");
  CHECK(contains(json, "\"state\":\"HIT\""));
  sitefile_string_free(json);
  /* The static profile at the edge: fresh 900 s, stale-while-revalidate 7200 s more, stale-if-error
   * 21600 s more. */
  EXPECT(sitefile_edge_stored_copy(plan, 1000, false, NULL, &json), SITEFILE_STATUS_OK, "");
  CHECK(contains(json, "\"state\":\"STALE\""));
  sitefile_string_free(json);
  EXPECT(sitefile_edge_stored_copy(plan, 9000, false, NULL, &json), SITEFILE_STATUS_OK, "");
  CHECK(contains(json, "\"state\":\"MISS\""));
  sitefile_string_free(json);
  EXPECT(sitefile_edge_stored_copy(plan, 9000, true, NULL, &json), SITEFILE_STATUS_OK, "");
  CHECK(contains(json, "\"state\":\"STALE-ERROR\""));
  sitefile_string_free(json);
  EXPECT(sitefile_edge_stored_copy(plan, 9000, true, "{\"status\": 503}", &json), SITEFILE_STATUS_OK,
         "");
  CHECK(contains(json, "\"state\":\"STALE-ERROR\""));
  sitefile_string_free(json);
  EXPECT(sitefile_edge_stored_copy(plan, 9000, true, "{\"status\": 200}", &json), SITEFILE_STATUS_OK,
         "");
  CHECK(contains(json, "\"state\":\"MISS\""));
  sitefile_string_free(json);

  EXPECT(sitefile_edge_after_origin(plan, "{not json", &json), SITEFILE_STATUS_INVALID_JSON,
         "invalid origin answer");
  CHECK(json == NULL);
  origin_headers(plan);
  sitefile_edge_plan_free(plan);

  EXPECT(sitefile_edge_plan_new(site, request, "{\"profile\": \"bogus\"}", &plan),
         SITEFILE_STATUS_INVALID_CONFIG, "");
  CHECK(plan == NULL);
  EXPECT(sitefile_edge_plan_new(site, "{\"url\": 1}", NULL, &plan), SITEFILE_STATUS_INVALID_REQUEST,
         "");
  EXPECT(sitefile_edge_plan_json(NULL, &json), SITEFILE_STATUS_NULL_ARGUMENT, "plan is NULL");
  sitefile_edge_plan_free(NULL);
}

/* A step of an exchange (JSON; free it with sitefile_string_free). */
static char *exchange_next(sitefile_edge_exchange *ex) {
  char *step = NULL;
  EXPECT(sitefile_edge_exchange_next(ex, &step), SITEFILE_STATUS_OK, "");
  return step;
}

/* Answers an exchange's step with `answer` (a JSON object's members, without `nowMs`). */
static sitefile_status exchange_answer(sitefile_edge_exchange *ex, const char *answer,
                                       int64_t now) {
  char json[2048];
  snprintf(json, sizeof json, "{%s, \"nowMs\": %lld}", answer, (long long)now);
  return sitefile_edge_exchange_answer(ex, json);
}

/* The copy a `respond` step has the host keep: the store's `"headers": [...]` (free it). */
static char *stored_headers(const char *respond) {
  const char *store = respond == NULL ? NULL : strstr(respond, "\"store\":{");
  const char *from = store == NULL ? NULL : strstr(store, "\"headers\":");
  const char *to = from == NULL ? NULL : strstr(from, ",\"maxAge\"");
  if (to == NULL) {
    return NULL;
  }
  char *headers = malloc((size_t)(to - from) + 1);
  if (headers == NULL) abort();
  memcpy(headers, from, (size_t)(to - from));
  headers[to - from] = '\0';
  return headers;
}

/* The edge exchange of one request, driven as a host drives it: a miss asks the origin and has
 * the host store the copy (a second miss meanwhile follows its flight, then serves the copy);
 * the next request is a hit served from it. Answers out of order and NULL arguments are
 * refused. */
static void exchange(sitefile_site *site) {
  const char *request =
      "{\"url\": \"https://site.example/\", \"headers\": [[\"user-agent\", \"Mozilla/5.0\"]]}";
  sitefile_edge_exchange *ex = NULL;
  EXPECT(sitefile_edge_exchange_new(site, request, NULL, true, &ex), SITEFILE_STATUS_OK, "");
  CHECK(ex != NULL);

  /* The miss: lookup (answered out of order first: the step comes again), askOrigin as the
   * flight's leader, respond with the copy to store, settle, done. */
  char *step = exchange_next(ex);
  CHECK(contains(step, "\"step\":\"lookup\"") && contains(step, "\"key\":"));
  sitefile_string_free(step);
  EXPECT(exchange_answer(ex, "\"answer\": \"followed\"", NOW_MS), SITEFILE_STATUS_UNKNOWN_CALL,
         "");
  EXPECT(exchange_answer(ex, "\"answer\": \"kept\", \"kept\": true", NOW_MS),
         SITEFILE_STATUS_UNKNOWN_CALL, "");
  step = exchange_next(ex);
  CHECK(contains(step, "\"step\":\"lookup\""));
  sitefile_string_free(step);
  EXPECT(exchange_answer(ex, "\"answer\": \"lookup\", \"copy\": null", NOW_MS), SITEFILE_STATUS_OK,
         "");
  step = exchange_next(ex);
  CHECK(contains(step, "\"step\":\"askOrigin\"") && contains(step, "\"lead\":"));
  sitefile_string_free(step);
  size_t flights = 99;
  EXPECT(sitefile_site_edge_flights_in_air(site, &flights), SITEFILE_STATUS_OK, "");
  CHECK(flights == 1);
  CHECK(sitefile_edge_exchange_followed_flight_landed(ex)); /* it leads: follows nothing */
  /* A second miss for the key meanwhile follows the flight instead of asking the origin. */
  sitefile_edge_exchange *follower = NULL;
  EXPECT(sitefile_edge_exchange_new(site, request, NULL, true, &follower), SITEFILE_STATUS_OK, "");
  step = exchange_next(follower);
  CHECK(contains(step, "\"step\":\"lookup\""));
  sitefile_string_free(step);
  EXPECT(exchange_answer(follower, "\"answer\": \"lookup\", \"copy\": null", NOW_MS),
         SITEFILE_STATUS_OK, "");
  step = exchange_next(follower);
  CHECK(contains(step, "\"step\":\"follow\""));
  sitefile_string_free(step);
  CHECK(!sitefile_edge_exchange_followed_flight_landed(follower));
  EXPECT(exchange_answer(ex, "\"answer\": \"lookup\", \"copy\": null", NOW_MS),
         SITEFILE_STATUS_UNKNOWN_CALL, "");
  EXPECT(exchange_answer(ex,
                         "\"answer\": \"origin\", \"status\": 200, \"headers\": [[\"content-type\", "
                         "\"text/html\"]]",
                         NOW_MS),
         SITEFILE_STATUS_OK, "");
  step = exchange_next(ex);
  CHECK(contains(step, "\"step\":\"respond\"") && contains(step, "\"status\":200") &&
        contains(step, "\"body\":\"origin\"") && contains(step, "\"X-Cache\",\"MISS\""));
  char *headers = stored_headers(step);
  CHECK(headers != NULL && contains(headers, "\"x-sitefile-stored-at\""));
  sitefile_string_free(step);
  EXPECT(exchange_answer(ex, "\"answer\": \"kept\", \"kept\": true", NOW_MS), SITEFILE_STATUS_OK,
         "");
  step = exchange_next(ex);
  CHECK(contains(step, "\"step\":\"settle\""));
  sitefile_string_free(step);
  step = exchange_next(ex);
  CHECK(contains(step, "\"step\":\"done\""));
  sitefile_string_free(step);
  EXPECT(sitefile_site_edge_flights_in_air(site, &flights), SITEFILE_STATUS_OK, "");
  CHECK(flights == 0);
  EXPECT(exchange_answer(ex, "\"answer\": \"lookup\", \"copy\": null", NOW_MS),
         SITEFILE_STATUS_FINISHED, "");
  sitefile_edge_exchange *refresh = (sitefile_edge_exchange *)0x1;
  EXPECT(sitefile_edge_exchange_take_refresh(ex, &refresh), SITEFILE_STATUS_OK, "");
  CHECK(refresh == NULL);
  sitefile_edge_exchange_free(ex);

  /* The flight landed: the follower looks the stored copy up and serves it. */
  CHECK(sitefile_edge_exchange_followed_flight_landed(follower));
  EXPECT(exchange_answer(follower, "\"answer\": \"followed\"", NOW_MS), SITEFILE_STATUS_OK, "");
  step = exchange_next(follower);
  CHECK(contains(step, "\"step\":\"lookup\""));
  sitefile_string_free(step);
  char answer[1536];
  snprintf(answer, sizeof answer, "\"answer\": \"lookup\", \"copy\": {\"status\": 200, %s}",
           headers != NULL ? headers : "\"headers\": []");
  free(headers);
  EXPECT(exchange_answer(follower, answer, NOW_MS), SITEFILE_STATUS_OK, "");
  step = exchange_next(follower);
  CHECK(contains(step, "\"step\":\"respond\"") && contains(step, "\"body\":\"stored\""));
  sitefile_string_free(step);
  step = exchange_next(follower);
  CHECK(contains(step, "\"step\":\"done\""));
  sitefile_string_free(step);
  sitefile_edge_exchange_free(follower);

  /* The hit: the stored copy's head answers the lookup; the stored body is served, without the
   * stored-at stamp, and nothing goes to the origin. */
  ex = NULL;
  EXPECT(sitefile_edge_exchange_new(site, request, NULL, true, &ex), SITEFILE_STATUS_OK, "");
  step = exchange_next(ex);
  CHECK(contains(step, "\"step\":\"lookup\""));
  sitefile_string_free(step);
  EXPECT(exchange_answer(ex, answer, NOW_MS + 1000), SITEFILE_STATUS_OK, "");
  step = exchange_next(ex);
  CHECK(contains(step, "\"step\":\"respond\"") && contains(step, "\"body\":\"stored\"") &&
        contains(step, "\"X-Cache\",\"HIT\"") && !contains(step, "x-sitefile-stored-at") &&
        contains(step, "\"store\":null"));
  sitefile_string_free(step);
  step = exchange_next(ex);
  CHECK(contains(step, "\"step\":\"done\""));
  sitefile_string_free(step);
  sitefile_edge_exchange_free(ex);

  /* Errors: an unknown profile, a request that is no request form, answers that are not
   * answers, and NULL arguments. */
  ex = (sitefile_edge_exchange *)0x1;
  EXPECT(sitefile_edge_exchange_new(site, request, "{\"profile\": \"bogus\"}", true, &ex),
         SITEFILE_STATUS_INVALID_CONFIG, "");
  CHECK(ex == NULL);
  EXPECT(sitefile_edge_exchange_new(site, "{\"url\": 1}", NULL, true, &ex),
         SITEFILE_STATUS_INVALID_REQUEST, "");
  EXPECT(sitefile_edge_exchange_new(NULL, request, NULL, true, &ex), SITEFILE_STATUS_NULL_ARGUMENT,
         "site is NULL");
  EXPECT(sitefile_edge_exchange_new(site, NULL, NULL, true, &ex), SITEFILE_STATUS_NULL_ARGUMENT,
         "request_json is NULL");
  EXPECT(sitefile_edge_exchange_new(site, request, NULL, true, NULL),
         SITEFILE_STATUS_NULL_ARGUMENT, "out_exchange is NULL");
  EXPECT(sitefile_edge_exchange_new(site, request, NULL, false, &ex), SITEFILE_STATUS_OK, "");
  step = exchange_next(ex);
  CHECK(contains(step, "\"step\":\"askOrigin\"")); /* no store: no lookup */
  sitefile_string_free(step);
  EXPECT(sitefile_edge_exchange_answer(ex, "{not json"), SITEFILE_STATUS_INVALID_JSON, "");
  EXPECT(sitefile_edge_exchange_answer(ex, NULL), SITEFILE_STATUS_NULL_ARGUMENT,
         "answer_json is NULL");
  EXPECT(sitefile_edge_exchange_next(ex, NULL), SITEFILE_STATUS_NULL_ARGUMENT, "out_json is NULL");
  EXPECT(sitefile_edge_exchange_take_refresh(ex, NULL), SITEFILE_STATUS_NULL_ARGUMENT,
         "out_refresh is NULL");
  sitefile_edge_exchange_free(ex); /* not done: freed all the same */
  EXPECT(sitefile_edge_exchange_next(NULL, &step), SITEFILE_STATUS_NULL_ARGUMENT,
         "exchange is NULL");
  EXPECT(sitefile_edge_exchange_answer(NULL, "{\"answer\": \"followed\", \"nowMs\": 0}"),
         SITEFILE_STATUS_NULL_ARGUMENT, "exchange is NULL");
  EXPECT(sitefile_edge_exchange_take_refresh(NULL, &refresh), SITEFILE_STATUS_NULL_ARGUMENT,
         "exchange is NULL");
  EXPECT(sitefile_site_edge_flights_in_air(NULL, &flights), SITEFILE_STATUS_NULL_ARGUMENT,
         "site is NULL");
  EXPECT(sitefile_site_edge_flights_in_air(site, NULL), SITEFILE_STATUS_NULL_ARGUMENT,
         "out_count is NULL");
  CHECK(!sitefile_edge_exchange_followed_flight_landed(NULL));
  sitefile_edge_exchange_free(NULL);
}

int main(void) {
  sitefile_site *site = NULL;
  EXPECT(sitefile_site_from_content(CONTENT, SETUP, &site), SITEFILE_STATUS_OK, "");
  if (site == NULL) {
    fprintf(stderr, "cannot create the site: %s\n", sitefile_last_error());
    return 1;
  }
  answered(site);
  reload(site);
  purge(site);
  preview(site);
  invoke(site);
  pass_and_errors(site);
  edge(site);
  exchange(site);
  sitefile_site_free(site);
  if (failures > 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("sitefile C admin and edge: all checks passed\n");
  return 0;
}
