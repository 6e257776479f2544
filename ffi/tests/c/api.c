/*
 * The C API through its public header only: a site from examples/storefront, a page resolved
 * with a loader round answered from C, and every error path of the calls (NULL arguments,
 * invalid UTF-8, bad JSON, calls in the wrong state), each with its status and message.
 * Every handle and string is freed. Run by ffi/tests/c_api.rs: `api <storefront dir>`.
 */
#include "sitefile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"


static void version(void) {
  char expected[64];
  snprintf(expected, sizeof expected, "%d.%d.%d", SITEFILE_VERSION_MAJOR,
           SITEFILE_VERSION_MINOR, SITEFILE_VERSION_PATCH);
  CHECK(strcmp(sitefile_version(), expected) == 0);
  CHECK(strcmp(sitefile_status_name(SITEFILE_STATUS_OK), "OK") == 0);
  CHECK(strcmp(sitefile_status_name(SITEFILE_STATUS_INVALID_JSON), "INVALID_JSON") == 0);
  CHECK(strcmp(sitefile_status_name(SITEFILE_STATUS_PANIC), "PANIC") == 0);
  CHECK(strcmp(sitefile_status_name(12345), "UNKNOWN") == 0);
}

static void site_errors(const char *dir) {
  sitefile_site *site = (sitefile_site *)0x1; /* set to NULL by every failing call */
  EXPECT(sitefile_site_from_dir(NULL, NULL, &site), SITEFILE_STATUS_NULL_ARGUMENT, "dir is NULL");
  CHECK(site == NULL);
  EXPECT(sitefile_site_from_dir(dir, NULL, NULL), SITEFILE_STATUS_NULL_ARGUMENT,
         "out_site is NULL");
  EXPECT(sitefile_site_from_dir("/nonexistent/sitefile-site", NULL, &site),
         SITEFILE_STATUS_NOT_FOUND, "");
  CHECK(site == NULL);
  EXPECT(sitefile_site_from_dir("\xff\xfe", NULL, &site), SITEFILE_STATUS_INVALID_UTF8,
         "dir is not valid UTF-8");
  EXPECT(sitefile_site_from_dir(dir, "{\"bogus\": 1}", &site), SITEFILE_STATUS_INVALID_CONFIG,
         "bogus");
  EXPECT(sitefile_site_from_dir(dir, "{not json", &site), SITEFILE_STATUS_INVALID_CONFIG, "");
  EXPECT(sitefile_site_from_content("{not json", NULL, &site), SITEFILE_STATUS_INVALID_JSON, "");
  CHECK(site == NULL);
  EXPECT(sitefile_site_from_content(NULL, NULL, &site), SITEFILE_STATUS_NULL_ARGUMENT,
         "content_json is NULL");

  char *text = NULL;
  EXPECT(sitefile_site_revision(NULL, &text), SITEFILE_STATUS_NULL_ARGUMENT, "site is NULL");
  EXPECT(sitefile_site_block(NULL, "Header", &text), SITEFILE_STATUS_NULL_ARGUMENT,
         "site is NULL");
  EXPECT(sitefile_site_reload(NULL, (const uint8_t *)"{}", 2, 0, &text),
         SITEFILE_STATUS_NULL_ARGUMENT, "site is NULL");
  CHECK(text == NULL);

  /* NULL is a no-op for every free, and a free keeps the last error. */
  sitefile_site_free(NULL);
  sitefile_resolution_free(NULL);
  sitefile_string_free(NULL);
  CHECK(sitefile_string_len(NULL) == 0);
  CHECK(strcmp(sitefile_last_error(), "site is NULL") == 0);
}

static void content_site(void) {
  sitefile_site *site = NULL;
  EXPECT(sitefile_site_from_content("{\"Header\": {\"alert\": \"hi\"}}", "{}", &site),
         SITEFILE_STATUS_OK, "");
  CHECK(site != NULL);
  char *block = NULL;
  EXPECT(sitefile_site_block(site, "Header", &block), SITEFILE_STATUS_OK, "");
  CHECK(contains(block, "\"alert\":\"hi\""));
  sitefile_string_free(block);
  sitefile_site_free(site);
}

/* A bundle is read for exactly its length: no NUL needed, nothing past it read. */
static void bundle_site(void) {
  static const char bytes[] = "{\"Header\": {\"alert\": \"from a bundle\"}}TRAILING GARBAGE";
  const size_t len = strlen(bytes) - strlen("TRAILING GARBAGE");
  sitefile_site *site = NULL;
  EXPECT(sitefile_site_from_bundle((const uint8_t *)bytes, len, NULL, &site), SITEFILE_STATUS_OK, "");
  CHECK(site != NULL);
  char *block = NULL;
  EXPECT(sitefile_site_block(site, "Header", &block), SITEFILE_STATUS_OK, "");
  CHECK(contains(block, "\"alert\":\"from a bundle\""));
  sitefile_string_free(block);
  sitefile_site_free(site);

  site = NULL;
  EXPECT(sitefile_site_from_bundle((const uint8_t *)bytes, strlen(bytes), NULL, &site),
         SITEFILE_STATUS_INVALID_JSON, "");
  CHECK(site == NULL);
  EXPECT(sitefile_site_from_bundle(NULL, 0, NULL, &site), SITEFILE_STATUS_NULL_ARGUMENT,
         "bundle is NULL");
  EXPECT(sitefile_site_from_bundle((const uint8_t *)bytes, len, "{\"bogus\": 1}", &site),
         SITEFILE_STATUS_INVALID_CONFIG, "");
  EXPECT(sitefile_site_from_bundle((const uint8_t *)bytes, len, NULL, NULL),
         SITEFILE_STATUS_NULL_ARGUMENT, "out_site is NULL");
}

/* The page a request resolves to over content whose home page shows a variant inside
 * 2000-01-01..2999-01-01 (a date rule) and another outside it; `*out` the page's JSON. */
static void resolve_dated(const char *request_json, char **out) {
  static const char content[] =
      "{\"pages-home\": {\"__resolveType\": \"website/pages/Page.tsx\", \"path\": \"/\","
      " \"sections\": [{\"__resolveType\": \"website/flags/multivariate/section.ts\", \"variants\": ["
      "{\"rule\": {\"__resolveType\": \"website/matchers/date.ts\", \"start\": \"2000-01-01T00:00:00Z\","
      " \"end\": \"2999-01-01T00:00:00Z\"}, \"value\": {\"__resolveType\": \"site/sections/Hero.tsx\","
      " \"title\": \"in the window\"}},"
      "{\"rule\": {\"__resolveType\": \"website/matchers/always.ts\"}, \"value\": {\"__resolveType\":"
      " \"site/sections/Hero.tsx\", \"title\": \"outside it\"}}]}]}}";
  sitefile_site *site = NULL;
  sitefile_resolution *res = NULL;
  *out = NULL;
  EXPECT(sitefile_site_from_content(content, "{}", &site), SITEFILE_STATUS_OK, "");
  if (site == NULL) return;
  EXPECT(sitefile_resolve_begin(site, request_json, NULL, &res), SITEFILE_STATUS_OK, "");
  if (res != NULL) {
    EXPECT(sitefile_resolution_next(res, out), SITEFILE_STATUS_OK, "");
    sitefile_resolution_free(res);
  }
  sitefile_site_free(site);
}

/* A request without "now" is resolved at the system clock's instant, as in Node; "now" in the
 * request wins. */
static void clock_default(void) {
  char *page = NULL;
  resolve_dated("{\"url\": \"https://shop.example/\"}", &page);
  CHECK(page != NULL && contains(page, "in the window"));
  sitefile_string_free(page);
  resolve_dated("{\"url\": \"https://shop.example/\", \"now\": \"1999-06-01T00:00:00Z\"}", &page);
  CHECK(page != NULL && contains(page, "outside it"));
  sitefile_string_free(page);
}

/* "draws" in the request form are the request's random rolls, taken before its seed's: over a
 * 50% random rule, 0.4 is the test variant and 0.6 the control (seed 0 alone rolls 0.88), and
 * the first roll's sticky cookie is in the page's effects. A roll outside [0, 1) is refused. */
static void scripted_draws(void) {
  static const char content[] =
      "{\"pages-home\": {\"__resolveType\": \"website/pages/Page.tsx\", \"path\": \"/\","
      " \"sections\": [{\"__resolveType\": \"website/flags/multivariate.ts\", \"variants\": ["
      "{\"rule\": {\"__resolveType\": \"website/matchers/random.ts\", \"traffic\": 0.5},"
      " \"value\": {\"__resolveType\": \"site/sections/Hero.tsx\", \"title\": \"test\"}},"
      "{\"rule\": {\"__resolveType\": \"website/matchers/always.ts\"}, \"value\": {\"__resolveType\":"
      " \"site/sections/Hero.tsx\", \"title\": \"control\"}}]}]}}";
  static const char *const requests[2] = {
      "{\"url\": \"https://shop.example/\", \"draws\": [0.4]}",
      "{\"url\": \"https://shop.example/\", \"draws\": [0.6]}",
  };
  static const char *const titles[2] = {"\"title\":\"test\"", "\"title\":\"control\""};
  sitefile_site *site = NULL;
  EXPECT(sitefile_site_from_content(content, "{}", &site), SITEFILE_STATUS_OK, "");
  if (site == NULL) return;
  for (int i = 0; i < 2; i++) {
    sitefile_resolution *res = NULL;
    char *page = NULL;
    EXPECT(sitefile_resolve_begin(site, requests[i], NULL, &res), SITEFILE_STATUS_OK, "");
    if (res == NULL) continue;
    EXPECT(sitefile_resolution_next(res, &page), SITEFILE_STATUS_OK, "");
    CHECK(contains(page, titles[i]));
    CHECK(contains(page, "platform_segment="));
    sitefile_string_free(page);
    sitefile_resolution_free(res);
  }
  sitefile_resolution *res = (sitefile_resolution *)0x1;
  EXPECT(sitefile_resolve_begin(site, "{\"url\": \"https://shop.example/\", \"draws\": [0.4, 1.5]}",
                                NULL, &res),
         SITEFILE_STATUS_INVALID_REQUEST, "draws[1] is 1.5: every draw must be a number in [0, 1)");
  CHECK(res == NULL);
  sitefile_site_free(site);
}

/* A page request's draft: the core names the fetch, keeps what it was handed, and the page is
 * resolved over it; a failed fetch and a host that may not preview render published content. */
static void page_drafts(void) {
  static const char content[] =
      "{\"Site\": {\"previewHosts\": [\"preview.shop.example\"]},"
      " \"pages-home\": {\"path\": \"/\", \"sections\": [{\"__resolveType\":"
      " \"site/sections/Hero.tsx\", \"title\": \"published\"}]}}";
  static const char draft_body[] =
      "{\"pages-home\": {\"path\": \"/\", \"sections\": [{\"__resolveType\":"
      " \"site/sections/Hero.tsx\", \"title\": \"draft\"}]}}";
  static const char entering[] =
      "{\"url\": \"https://preview.shop.example/?__draft=localhost:9/drafts/home@v1\"}";
  sitefile_site *site = NULL;
  EXPECT(sitefile_site_from_content(content, "{\"env\": {\"PLATFORM_PREVIEW_API_DOMAINS\": \"localhost\"}}",
                                    &site),
         SITEFILE_STATUS_OK, "");
  if (site == NULL) return;
  sitefile_page_draft *draft = NULL;
  char *fetch = NULL;
  char *page = NULL;
  sitefile_resolution *res = NULL;

  /* A failed fetch: the published page. */
  EXPECT(sitefile_page_draft_begin(site, entering, false, &draft), SITEFILE_STATUS_OK, "");
  EXPECT(sitefile_page_draft_fetch(draft, &fetch), SITEFILE_STATUS_OK, "");
  CHECK(contains(fetch, "\"url\":\"http://localhost:9/drafts/home?v=v1\""));
  CHECK(contains(fetch, "\"timeoutMs\":5000") && contains(fetch, "\"maxBytes\":67108864"));
  sitefile_string_free(fetch);
  EXPECT(sitefile_page_draft_provide(draft, NULL, 0), SITEFILE_STATUS_OK, "");
  EXPECT(sitefile_resolve_page_draft_begin(site, entering, draft, NULL, &res), SITEFILE_STATUS_OK, "");
  EXPECT(sitefile_resolution_next(res, &page), SITEFILE_STATUS_OK, "");
  CHECK(contains(page, "\"title\":\"published\""));
  sitefile_string_free(page);
  sitefile_resolution_free(res);
  sitefile_page_draft_free(draft);

  /* The draft read: rendered, and kept for the next request. */
  EXPECT(sitefile_page_draft_begin(site, entering, false, &draft), SITEFILE_STATUS_OK, "");
  EXPECT(sitefile_page_draft_provide(draft, (const uint8_t *)draft_body, strlen(draft_body)),
         SITEFILE_STATUS_OK, "");
  EXPECT(sitefile_resolve_page_draft_begin(site, entering, draft, NULL, &res), SITEFILE_STATUS_OK, "");
  EXPECT(sitefile_resolution_next(res, &page), SITEFILE_STATUS_OK, "");
  CHECK(contains(page, "\"title\":\"draft\""));
  sitefile_string_free(page);
  sitefile_resolution_free(res);
  sitefile_page_draft_free(draft);
  EXPECT(sitefile_page_draft_begin(site, entering, false, &draft), SITEFILE_STATUS_OK, "");
  fetch = (char *)0x1;
  EXPECT(sitefile_page_draft_fetch(draft, &fetch), SITEFILE_STATUS_OK, "");
  CHECK(fetch == NULL);
  sitefile_page_draft_free(draft);

  /* Another host never previews. */
  EXPECT(sitefile_page_draft_begin(site, "{\"url\": \"https://www.shop.example/?__draft=localhost:9/drafts/home@v1\"}",
                                   false, &draft),
         SITEFILE_STATUS_OK, "");
  fetch = (char *)0x1;
  EXPECT(sitefile_page_draft_fetch(draft, &fetch), SITEFILE_STATUS_OK, "");
  CHECK(fetch == NULL);
  EXPECT(sitefile_resolve_page_draft_begin(site, "{\"url\": \"https://www.shop.example/\"}", draft, NULL, &res),
         SITEFILE_STATUS_OK, "");
  EXPECT(sitefile_resolution_next(res, &page), SITEFILE_STATUS_OK, "");
  CHECK(contains(page, "\"title\":\"published\""));
  sitefile_string_free(page);
  sitefile_resolution_free(res);
  sitefile_page_draft_free(draft);

  EXPECT(sitefile_page_draft_begin(site, NULL, false, &draft), SITEFILE_STATUS_NULL_ARGUMENT,
         "request_json is NULL");
  CHECK(draft == NULL);
  EXPECT(sitefile_resolve_page_draft_begin(site, entering, NULL, NULL, &res),
         SITEFILE_STATUS_NULL_ARGUMENT, "draft is NULL");
  sitefile_page_draft_free(NULL);
  sitefile_site_free(site);
}

static void site_calls(sitefile_site *site) {
  char *revision = NULL;
  EXPECT(sitefile_site_revision(site, &revision), SITEFILE_STATUS_OK, "");
  CHECK(revision != NULL && revision[0] != '\0');
  EXPECT(sitefile_site_revision(site, NULL), SITEFILE_STATUS_NULL_ARGUMENT,
         "out_revision is NULL");

  char *block = NULL;
  EXPECT(sitefile_site_block(site, "Header", &block), SITEFILE_STATUS_OK, "");
  CHECK(contains(block, "Free shipping over $50"));
  sitefile_string_free(block);
  block = (char *)0x1;
  EXPECT(sitefile_site_block(site, "No such block", &block), SITEFILE_STATUS_OK, "");
  CHECK(block == NULL);
  EXPECT(sitefile_site_block(site, NULL, &block), SITEFILE_STATUS_NULL_ARGUMENT, "name is NULL");

  /* A refused reload changes nothing. */
  char *response = NULL;
  const char *bad = "[1, 2]";
  EXPECT(sitefile_site_reload(site, (const uint8_t *)bad, strlen(bad), 0, &response),
         SITEFILE_STATUS_INVALID_CONTENT, "");
  CHECK(response == NULL);
  const char *broken = "{\"blocks\": ";
  EXPECT(sitefile_site_reload(site, (const uint8_t *)broken, strlen(broken), 0, &response),
         SITEFILE_STATUS_INVALID_JSON, "");
  EXPECT(sitefile_site_reload(site, NULL, 0, 0, &response), SITEFILE_STATUS_NULL_ARGUMENT,
         "body is NULL");
  EXPECT(sitefile_site_reload(site, (const uint8_t *)"{}", 2, INT64_MAX, &response),
         SITEFILE_STATUS_INVALID_REQUEST, "out of range");
  char *same = NULL;
  EXPECT(sitefile_site_revision(site, &same), SITEFILE_STATUS_OK, "");
  CHECK(same != NULL && revision != NULL && strcmp(same, revision) == 0);
  sitefile_string_free(same);

  /* A delta reload: the response names the new revision, which now serves. */
  const char *delta = "{\"blocks\": {\"C host note\": {\"text\": \"from C\"}}}";
  EXPECT(sitefile_site_reload(site, (const uint8_t *)delta, strlen(delta), 1700000000000, &response),
         SITEFILE_STATUS_OK, "");
  CHECK(contains(response, "\"ok\":true"));
  CHECK(contains(response, "\"mode\":\"delta\""));
  char *after = NULL;
  EXPECT(sitefile_site_revision(site, &after), SITEFILE_STATUS_OK, "");
  CHECK(after != NULL && revision != NULL && strcmp(after, revision) != 0);
  CHECK(after != NULL && contains(response, after));
  EXPECT(sitefile_site_block(site, "C host note", &block), SITEFILE_STATUS_OK, "");
  CHECK(contains(block, "from C"));
  sitefile_string_free(block);
  sitefile_string_free(after);
  sitefile_string_free(response);
  sitefile_string_free(revision);
}

static void resolve_errors(sitefile_site *site) {
  sitefile_resolution *res = (sitefile_resolution *)0x1;
  EXPECT(sitefile_resolve_begin(NULL, "{\"url\": \"https://storefront.example/\"}", NULL, &res),
         SITEFILE_STATUS_NULL_ARGUMENT, "site is NULL");
  CHECK(res == NULL);
  EXPECT(sitefile_resolve_begin(site, NULL, NULL, &res), SITEFILE_STATUS_NULL_ARGUMENT,
         "request_json is NULL");
  /* The core refuses a request that is not JSON, or JSON of the wrong shape, as a bad request. */
  EXPECT(sitefile_resolve_begin(site, "{\"url\": ", NULL, &res), SITEFILE_STATUS_INVALID_REQUEST,
         "invalid request");
  EXPECT(sitefile_resolve_begin(site, "{\"url\": 5}", NULL, &res), SITEFILE_STATUS_INVALID_REQUEST,
         "invalid request");
  EXPECT(sitefile_resolve_begin(site, "{\"url\": \"https://x.example/\xc3\x28\"}", NULL, &res),
         SITEFILE_STATUS_INVALID_UTF8, "request_json is not valid UTF-8");
  CHECK(res == NULL);
  EXPECT(sitefile_resolve_begin(site, "{\"url\": \"https://storefront.example/\"}", NULL, NULL),
         SITEFILE_STATUS_NULL_ARGUMENT, "out_resolution is NULL");

  char *step = NULL;
  EXPECT(sitefile_resolution_next(NULL, &step), SITEFILE_STATUS_NULL_ARGUMENT,
         "resolution is NULL");
  EXPECT(sitefile_resolution_provide(NULL, 0, "null", NULL), SITEFILE_STATUS_NULL_ARGUMENT,
         "resolution is NULL");
}

static void resolve_shoes(sitefile_site *site) {
  sitefile_resolution *res = NULL;
  /* A fixed instant outside the example's Black Friday campaign, whose header says otherwise. */
  EXPECT(sitefile_resolve_begin(
             site, "{\"url\": \"https://storefront.example/shoes\", \"now\": \"2026-06-01T12:00:00Z\"}",
             NULL, &res),
         SITEFILE_STATUS_OK, "");
  CHECK(res != NULL);
  if (res == NULL) return;

  char *step = NULL;
  EXPECT(sitefile_resolution_next(res, NULL), SITEFILE_STATUS_NULL_ARGUMENT, "out_json is NULL");
  EXPECT(sitefile_resolution_next(res, &step), SITEFILE_STATUS_OK, "");
  CHECK(is_loader_round(step));
  CHECK(contains(step, "vtex/loaders/intelligentSearch/productListingPage.ts"));
  CHECK(contains(step, "\"value\":\"shoes\""));

  size_t ids[16];
  size_t n = call_ids(step, ids, 16);
  CHECK(n == 1);
  sitefile_string_free(step);
  step = NULL;

  /* Wrong answers first: an unknown call, bad JSON, invalid UTF-8. */
  EXPECT(sitefile_resolution_provide(res, 999999, "null", NULL), SITEFILE_STATUS_UNKNOWN_CALL,
         "");
  if (n > 0) {
    EXPECT(sitefile_resolution_provide(res, ids[0], "{\"products\": [", NULL),
           SITEFILE_STATUS_INVALID_JSON, "");
    EXPECT(sitefile_resolution_provide(res, ids[0], "\"\xff\"", NULL),
           SITEFILE_STATUS_INVALID_UTF8, "value_json is not valid UTF-8");
    EXPECT(sitefile_resolution_provide(res, ids[0], "{\"products\": [{\"name\": \"Runner\"}]}",
                                       NULL),
           SITEFILE_STATUS_OK, "");
    EXPECT(sitefile_resolution_provide(res, ids[0], "null", NULL),
           SITEFILE_STATUS_ALREADY_ANSWERED, "");
  }

  int rounds = 0;
  for (;;) {
    EXPECT(sitefile_resolution_next(res, &step), SITEFILE_STATUS_OK, "");
    if (!is_loader_round(step) || ++rounds > 8) break;
    /* Any further round: every loader answered with an error, as a failing host would. */
    n = call_ids(step, ids, 16);
    for (size_t i = 0; i < n; i++) {
      EXPECT(sitefile_resolution_provide(res, ids[i], NULL, "not available in the C test"),
             SITEFILE_STATUS_OK, "");
    }
    sitefile_string_free(step);
    step = NULL;
  }
  CHECK(contains(step, "\"step\":\"done\""));
  CHECK(contains(step, "\"page\":\"pages-category\""));
  CHECK(contains(step, "\"products\":[{\"name\":\"Runner\"}]"));
  CHECK(contains(step, "Free shipping over $50"));
  sitefile_string_free(step);

  /* After done: the wrong state. */
  step = (char *)0x1;
  EXPECT(sitefile_resolution_next(res, &step), SITEFILE_STATUS_FINISHED, "");
  CHECK(step == NULL);
  EXPECT(sitefile_resolution_provide(res, 0, "null", NULL), SITEFILE_STATUS_FINISHED, "");
  sitefile_resolution_free(res);
}

/* A resolution stays valid after its site is freed. */
static void resolution_outlives_site(const char *dir) {
  sitefile_site *site = NULL;
  EXPECT(sitefile_site_from_dir(dir, NULL, &site), SITEFILE_STATUS_OK, "");
  if (site == NULL) return;
  sitefile_resolution *res = NULL;
  EXPECT(sitefile_resolve_begin(site, "{\"url\": \"https://storefront.example/\"}", NULL, &res),
         SITEFILE_STATUS_OK, "");
  sitefile_site_free(site);
  char *step = NULL;
  EXPECT(sitefile_resolution_next(res, &step), SITEFILE_STATUS_OK, "");
  CHECK(contains(step, "\"step\":\""));
  sitefile_string_free(step);
  sitefile_resolution_free(res);
}

/* The site's state calls (counts, purges, the schema) and their error paths. */
static void state_calls(sitefile_site *site) {
  size_t n = 99;
  EXPECT(sitefile_site_block_count(site, &n), SITEFILE_STATUS_OK, "");
  CHECK(n > 0);
  EXPECT(sitefile_site_block_count(NULL, &n), SITEFILE_STATUS_NULL_ARGUMENT, "site is NULL");
  CHECK(n == 0);
  EXPECT(sitefile_site_block_count(site, NULL), SITEFILE_STATUS_NULL_ARGUMENT,
         "out_count is NULL");
  EXPECT(sitefile_site_loader_cache_entries(site, &n), SITEFILE_STATUS_OK, "");
  CHECK(n == 0);
  EXPECT(sitefile_site_edge_cache_entries(site, &n), SITEFILE_STATUS_OK, "");
  CHECK(n == 0);

  char *keys = NULL;
  EXPECT(sitefile_site_purge(site, "/shoes", &keys), SITEFILE_STATUS_OK, "");
  CHECK(keys != NULL && strcmp(keys, "[]") == 0);
  sitefile_string_free(keys);
  EXPECT(sitefile_site_purge(site, NULL, &keys), SITEFILE_STATUS_NULL_ARGUMENT, "target is NULL");
  CHECK(keys == NULL);
  EXPECT(sitefile_site_purge_loaders(site), SITEFILE_STATUS_OK, "");
  EXPECT(sitefile_site_purge_loaders(NULL), SITEFILE_STATUS_NULL_ARGUMENT, "site is NULL");

  EXPECT(sitefile_site_set_schema(site, "{", NULL), SITEFILE_STATUS_INVALID_JSON, "");
  EXPECT(sitefile_site_set_schema(site, "{}", "{}"), SITEFILE_STATUS_INVALID_CONFIG,
         "invalid matcher schemas");
  EXPECT(sitefile_site_set_schema(site, NULL, NULL), SITEFILE_STATUS_NULL_ARGUMENT,
         "schema_json is NULL");
}

/* Resolving a value and a draft, section loaders and page JSON: their error paths and misuse. */
static void more_resolutions(sitefile_site *site) {
  const char *request = "{\"url\": \"https://storefront.example/\"}";
  sitefile_resolution *res = NULL;
  EXPECT(sitefile_resolve_value_begin(site, request, "{", NULL, &res), SITEFILE_STATUS_INVALID_JSON,
         "");
  EXPECT(sitefile_resolve_value_begin(site, request, NULL, NULL, &res),
         SITEFILE_STATUS_NULL_ARGUMENT, "value_json is NULL");
  EXPECT(sitefile_resolve_draft_begin(site, request, "[]", NULL, &res),
         SITEFILE_STATUS_INVALID_CONTENT, "not a JSON object of blocks");
  EXPECT(sitefile_resolve_draft_begin(site, "{", "{}", NULL, &res),
         SITEFILE_STATUS_INVALID_REQUEST, "");
  CHECK(res == NULL);
  EXPECT(sitefile_resolve_value_begin(site, request, "{\"a\": 1}", NULL, &res),
         SITEFILE_STATUS_OK, "");
  char *step = NULL;
  EXPECT(sitefile_resolution_next(res, &step), SITEFILE_STATUS_OK, "");
  CHECK(contains(step, "\"step\":\"done\""));
  sitefile_string_free(step);
  /* Not a page JSON resolution. */
  EXPECT(sitefile_resolution_page_json_sections(res, &step), SITEFILE_STATUS_INVALID_REQUEST,
         "not a finished page JSON resolution");
  sitefile_response *response = NULL;
  EXPECT(sitefile_resolution_page_json_response(res, NULL, &response),
         SITEFILE_STATUS_INVALID_REQUEST, "not a finished page JSON resolution");
  sitefile_resolution_free(res);

  sitefile_section_loaders *run = NULL;
  EXPECT(sitefile_section_loaders_begin(site, request, "{", "[]", &run),
         SITEFILE_STATUS_INVALID_JSON, "");
  EXPECT(sitefile_section_loaders_begin(site, request, "[]", "{}", &run),
         SITEFILE_STATUS_INVALID_JSON, "section keys with loaders");
  EXPECT(sitefile_section_loaders_begin(site, request, "[]", NULL, &run),
         SITEFILE_STATUS_NULL_ARGUMENT, "with_loaders_json is NULL");
  const char *sections = "[{\"component\": \"site/sections/A.tsx\", \"props\": {\"n\": 1}}]";
  EXPECT(sitefile_section_loaders_begin(site, request, sections, "[\"site/sections/A.tsx\"]", &run),
         SITEFILE_STATUS_OK, "");
  /* The third argument of every loader: the request's device (no user agent: desktop). */
  char *context = NULL;
  EXPECT(sitefile_section_loaders_context(run, &context), SITEFILE_STATUS_OK, "");
  CHECK(context != NULL && strcmp(context, "{\"device\":\"desktop\"}") == 0);
  sitefile_string_free(context);
  EXPECT(sitefile_section_loaders_context(NULL, &context), SITEFILE_STATUS_NULL_ARGUMENT,
         "run is NULL");
  EXPECT(sitefile_section_loaders_next(run, &step), SITEFILE_STATUS_OK, "");
  CHECK(is_loader_round(step));
  size_t ids[4];
  size_t count = call_ids(step, ids, 4);
  sitefile_string_free(step);
  CHECK(count == 1);
  EXPECT(sitefile_section_loaders_provide(run, 4242, "{}", NULL), SITEFILE_STATUS_UNKNOWN_CALL, "");
  EXPECT(sitefile_section_loaders_provide(run, ids[0], "{", NULL), SITEFILE_STATUS_INVALID_JSON, "");
  EXPECT(sitefile_section_loaders_provide(run, ids[0], "{\"n\": 2}", NULL), SITEFILE_STATUS_OK, "");
  EXPECT(sitefile_section_loaders_provide(run, ids[0], "{}", NULL),
         SITEFILE_STATUS_ALREADY_ANSWERED, "");
  EXPECT(sitefile_section_loaders_next(run, &step), SITEFILE_STATUS_OK, "");
  CHECK(contains(step, "\"step\":\"done\"") && contains(step, "\"n\":2"));
  sitefile_string_free(step);
  EXPECT(sitefile_section_loaders_next(run, &step), SITEFILE_STATUS_FINISHED, "");
  EXPECT(sitefile_section_loaders_next(NULL, &step), SITEFILE_STATUS_NULL_ARGUMENT, "run is NULL");
  sitefile_section_loaders_free(run);
  sitefile_section_loaders_free(NULL);

  sitefile_page_json *pj = (sitefile_page_json *)0x1;
  EXPECT(sitefile_page_json_begin(site, request, &pj), SITEFILE_STATUS_OK, "");
  CHECK(pj == NULL); /* not page JSON */
  EXPECT(sitefile_page_json_begin(site, "{", &pj), SITEFILE_STATUS_INVALID_REQUEST, "");
  /* NULL has a kind of its own, no live request's (RESPOND is 0). */
  CHECK(sitefile_page_json_kind_of(NULL) == SITEFILE_PAGE_JSON_KIND_NONE);
  CHECK(SITEFILE_PAGE_JSON_KIND_NONE != SITEFILE_PAGE_JSON_KIND_RESPOND &&
        SITEFILE_PAGE_JSON_KIND_NONE != SITEFILE_PAGE_JSON_KIND_RESOLVE);
  EXPECT(sitefile_page_json_begin(site, "{\"url\": \"https://storefront.example/?asJson\"}", &pj),
         SITEFILE_STATUS_OK, "");
  CHECK(sitefile_page_json_kind_of(pj) == SITEFILE_PAGE_JSON_KIND_RESOLVE);
  char *job = NULL;
  EXPECT(sitefile_page_json_job(pj, &job), SITEFILE_STATUS_OK, "");
  CHECK(contains(job, "\"kind\":\"asJson\""));
  sitefile_string_free(job);
  EXPECT(sitefile_page_json_response(pj, &response), SITEFILE_STATUS_INVALID_REQUEST,
         "does not finish");
  EXPECT(sitefile_page_json_resolve(pj, "{", NULL, &res), SITEFILE_STATUS_INVALID_JSON,
         "dropped sections");
  EXPECT(sitefile_page_json_resolve(pj, NULL, NULL, &res), SITEFILE_STATUS_OK, "");
  sitefile_resolution *again = NULL;
  EXPECT(sitefile_page_json_resolve(pj, NULL, NULL, &again), SITEFILE_STATUS_FINISHED,
         "already finished");
  CHECK(again == NULL);
  /* Before the page is done there is nothing to finish. */
  EXPECT(sitefile_resolution_page_json_response(res, NULL, &response),
         SITEFILE_STATUS_INVALID_REQUEST, "");
  for (;;) {
    EXPECT(sitefile_resolution_next(res, &step), SITEFILE_STATUS_OK, "");
    if (!is_loader_round(step)) {
      break;
    }
    count = call_ids(step, ids, 4);
    for (size_t i = 0; i < count; i++) {
      sitefile_resolution_provide(res, ids[i], "[]", NULL);
    }
    sitefile_string_free(step);
  }
  sitefile_string_free(step);
  EXPECT(sitefile_resolution_page_json_sections(res, &step), SITEFILE_STATUS_OK, "");
  CHECK(step != NULL && step[0] == '[');
  sitefile_string_free(step);
  EXPECT(sitefile_resolution_page_json_response(res, "{", &response), SITEFILE_STATUS_INVALID_JSON,
         "");
  EXPECT(sitefile_resolution_page_json_response(res, NULL, &response), SITEFILE_STATUS_OK, "");
  CHECK(sitefile_response_status(response) == 200);
  sitefile_response_free(response);
  EXPECT(sitefile_resolution_page_json_response(res, NULL, &response),
         SITEFILE_STATUS_INVALID_REQUEST, "");
  sitefile_resolution_free(res);
  sitefile_page_json_free(pj);
  sitefile_page_json_free(NULL);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <site dir>\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1];
  version();
  site_errors(dir);
  content_site();
  bundle_site();
  clock_default();
  scripted_draws();
  page_drafts();

  sitefile_site *site = NULL;
  EXPECT(sitefile_site_from_dir(dir, NULL, &site), SITEFILE_STATUS_OK, "");
  if (site == NULL) {
    fprintf(stderr, "cannot load %s: %s\n", dir, sitefile_last_error());
    return 1;
  }
  resolve_errors(site);
  resolve_shoes(site);
  state_calls(site);
  more_resolutions(site);
  site_calls(site);
  sitefile_site_free(site);
  resolution_outlives_site(dir);

  if (failures > 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("sitefile C API: all checks passed\n");
  return 0;
}
