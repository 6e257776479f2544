/*
 * Host callbacks through the public header: custom matchers, the feature-flag adapter and the
 * dangling-reference hook, called synchronously during sitefile_resolve_begin; every failure a
 * callback can report (an error answer, no answer, an answer of the wrong kind, a key with no
 * matcher) counts as false and is named in the page's effects.errors; every error path of the
 * host and answer calls (NULL, invalid UTF-8, bad JSON, a second answer). Run by
 * ffi/tests/c_api.rs: `host <host-content.json>`.
 */
#include "sitefile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"


static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  char *text = NULL;
  size_t len = 0;
  if (fseek(f, 0, SEEK_END) == 0) {
    long size = ftell(f);
    if (size >= 0 && fseek(f, 0, SEEK_SET) == 0) {
      text = malloc((size_t)size + 1);
      if (text != NULL) {
        len = fread(text, 1, (size_t)size, f);
        text[len] = '\0';
      }
    }
  }
  fclose(f);
  return text;
}

/* What the callbacks saw, through their user_data. */
typedef struct {
  int vip_calls;
  int vip_saw_rule;    /* the saved matcher's settings reached the rule */
  int vip_saw_context; /* the request's cookie and path reached the context */
  sitefile_status second_answer, bad_utf8, bad_json, null_message;
  int flag_calls;
  int dangling_calls;
} seen;

static void vip(void *user_data, const char *key, const char *rule_json, const char *context_json,
                sitefile_answer *answer) {
  seen *s = user_data;
  s->vip_calls++;
  s->vip_saw_rule = strcmp(key, "site/matchers/vip.ts") == 0 && contains(rule_json, "\"tier\":\"gold\"");
  s->vip_saw_context = contains(context_json, "\"path\":\"/\"") &&
                       contains(context_json, "\"cookies\":{") &&
                       contains(context_json, "\"userAgent\":");
  /* Misuse of an answer before the real one answers nothing. */
  s->bad_utf8 = sitefile_answer_string(answer, "\xff");
  s->bad_json = sitefile_answer_json(answer, "{not json");
  s->null_message = sitefile_answer_error(answer, NULL);
  sitefile_answer_bool(answer, contains(context_json, "\"tier\":\"gold\""));
  s->second_answer = sitefile_answer_bool(answer, 0);
}

static void boom(void *user_data, const char *key, const char *rule_json, const char *context_json,
                 sitefile_answer *answer) {
  (void)user_data, (void)key, (void)rule_json, (void)context_json;
  sitefile_answer_error(answer, "boom from C");
}

static void silent(void *user_data, const char *key, const char *rule_json,
                   const char *context_json, sitefile_answer *answer) {
  (void)user_data, (void)key, (void)rule_json, (void)context_json, (void)answer;
}

static void wrong_kind(void *user_data, const char *key, const char *rule_json,
                       const char *context_json, sitefile_answer *answer) {
  (void)user_data, (void)key, (void)rule_json, (void)context_json;
  sitefile_answer_string(answer, "yes");
}

static void never_called(void *user_data, const char *key, const char *rule_json,
                         const char *context_json, sitefile_answer *answer) {
  (void)key, (void)rule_json, (void)context_json;
  ((seen *)user_data)->vip_calls += 1000;
  sitefile_answer_bool(answer, 1);
}

static void flag_enabled(void *user_data, const char *flag, sitefile_answer *answer) {
  ((seen *)user_data)->flag_calls++;
  sitefile_answer_bool(answer, strcmp(flag, "new-checkout") == 0);
}

static void flag_variant(void *user_data, const char *flag, sitefile_answer *answer) {
  ((seen *)user_data)->flag_calls++;
  if (strcmp(flag, "broken") == 0) {
    sitefile_answer_error(answer, "adapter failure");
  } else {
    char variant[8]; /* a stack buffer: the answer is copied */
    snprintf(variant, sizeof variant, "%s", strcmp(flag, "exp") == 0 ? "b" : "z");
    sitefile_answer_string(answer, variant);
  }
}

static void dangling(void *user_data, const char *resolve_type, sitefile_answer *answer) {
  ((seen *)user_data)->dangling_calls++;
  if (strcmp(resolve_type, "site/loaders/missing.ts") == 0) {
    sitefile_answer_json(answer, "{\"from\": \"the C hook\"}");
  } else {
    sitefile_answer_error(answer, "unexpected reference");
  }
}

static void host_errors(void) {
  EXPECT(sitefile_host_new(NULL), SITEFILE_STATUS_NULL_ARGUMENT, "out_host is NULL");
  sitefile_host *host = NULL;
  EXPECT(sitefile_host_new(&host), SITEFILE_STATUS_OK, "");
  CHECK(host != NULL);
  seen s = {0};
  EXPECT(sitefile_host_register_matcher(NULL, "k", boom, NULL), SITEFILE_STATUS_NULL_ARGUMENT,
         "host is NULL");
  EXPECT(sitefile_host_register_matcher(host, NULL, boom, NULL), SITEFILE_STATUS_NULL_ARGUMENT,
         "key is NULL");
  EXPECT(sitefile_host_register_matcher(host, "k", NULL, NULL), SITEFILE_STATUS_NULL_ARGUMENT,
         "matcher is NULL");
  EXPECT(sitefile_host_register_matcher(host, "\xc3\x28", boom, NULL),
         SITEFILE_STATUS_INVALID_UTF8, "key is not valid UTF-8");
  EXPECT(sitefile_host_set_feature_flags(NULL, flag_enabled, NULL, &s),
         SITEFILE_STATUS_NULL_ARGUMENT, "host is NULL");
  EXPECT(sitefile_host_set_feature_flags(host, NULL, flag_variant, &s),
         SITEFILE_STATUS_NULL_ARGUMENT, "is_feature_enabled is NULL");
  EXPECT(sitefile_host_set_dangling_reference(NULL, dangling, &s), SITEFILE_STATUS_NULL_ARGUMENT,
         "host is NULL");
  EXPECT(sitefile_host_set_dangling_reference(host, NULL, &s), SITEFILE_STATUS_NULL_ARGUMENT,
         "on_dangling_reference is NULL");
  EXPECT(sitefile_answer_bool(NULL, 1), SITEFILE_STATUS_NULL_ARGUMENT, "answer is NULL");
  EXPECT(sitefile_answer_string(NULL, "x"), SITEFILE_STATUS_NULL_ARGUMENT, "answer is NULL");
  EXPECT(sitefile_answer_json(NULL, "1"), SITEFILE_STATUS_NULL_ARGUMENT, "answer is NULL");
  EXPECT(sitefile_answer_error(NULL, "x"), SITEFILE_STATUS_NULL_ARGUMENT, "answer is NULL");
  sitefile_host_free(host);
  sitefile_host_free(NULL);
  CHECK(strcmp(sitefile_last_error(), "answer is NULL") == 0);
}

/* Resolves "/" (with the tier cookie `tier`) with `host` and returns the done step. */
static char *resolve(sitefile_site *site, const char *tier, const sitefile_host *host) {
  char request[256];
  snprintf(request, sizeof request,
           "{\"url\": \"https://shop.example/\", \"cookies\": [[\"tier\", \"%s\"]]}", tier);
  sitefile_resolution *res = NULL;
  EXPECT(sitefile_resolve_begin(site, request, host, &res), SITEFILE_STATUS_OK, "");
  char *step = NULL;
  if (res != NULL) {
    EXPECT(sitefile_resolution_next(res, &step), SITEFILE_STATUS_OK, "");
    CHECK(contains(step, "\"step\":\"done\""));
  }
  sitefile_resolution_free(res);
  return step;
}

static int has_error(const char *page, const char *resolve_type, const char *message) {
  char needle[512];
  snprintf(needle, sizeof needle, "\"resolveType\":\"%s\",\"context\":\"Matcher\",\"message\":\"%s\"",
           resolve_type, message);
  return contains(page, needle);
}

static void callbacks(sitefile_site *site) {
  seen s = {0};
  sitefile_host *host = NULL;
  EXPECT(sitefile_host_new(&host), SITEFILE_STATUS_OK, "");
  if (host == NULL) return;
  /* A later registration of a key replaces the earlier one. */
  EXPECT(sitefile_host_register_matcher(host, "site/matchers/vip.ts", never_called, &s),
         SITEFILE_STATUS_OK, "");
  EXPECT(sitefile_host_register_matcher(host, "site/matchers/vip.ts", vip, &s), SITEFILE_STATUS_OK,
         "");
  EXPECT(sitefile_host_register_matcher(host, "site/matchers/boom.ts", boom, NULL),
         SITEFILE_STATUS_OK, "");
  EXPECT(sitefile_host_register_matcher(host, "site/matchers/silent.ts", silent, NULL),
         SITEFILE_STATUS_OK, "");
  EXPECT(sitefile_host_register_matcher(host, "site/matchers/wrong-kind.ts", wrong_kind, NULL),
         SITEFILE_STATUS_OK, "");
  EXPECT(sitefile_host_set_feature_flags(host, flag_enabled, flag_variant, &s), SITEFILE_STATUS_OK,
         "");
  EXPECT(sitefile_host_set_dangling_reference(host, dangling, &s), SITEFILE_STATUS_OK, "");

  char *gold = resolve(site, "gold", host);
  CHECK(s.vip_calls == 1);
  CHECK(s.vip_saw_rule);
  CHECK(s.vip_saw_context);
  CHECK(s.bad_utf8 == SITEFILE_STATUS_INVALID_UTF8);
  CHECK(s.bad_json == SITEFILE_STATUS_INVALID_JSON);
  CHECK(s.null_message == SITEFILE_STATUS_NULL_ARGUMENT);
  CHECK(s.second_answer == SITEFILE_STATUS_ALREADY_ANSWERED);
  CHECK(s.flag_calls == 3);
  CHECK(s.dangling_calls == 1);
  CHECK(contains(gold, "\"component\":\"site/sections/Vip.tsx\""));
  /* Every failing matcher counts as false, and is reported with its message. */
  CHECK(contains(gold, "\"component\":\"site/sections/AllFailed.tsx\""));
  CHECK(has_error(gold, "site/matchers/boom.ts", "boom from C"));
  CHECK(has_error(gold, "site/matchers/silent.ts",
                  "the custom matcher site/matchers/silent.ts gave no answer"));
  CHECK(has_error(gold, "site/matchers/wrong-kind.ts", "the callback answered a string, not a bool"));
  CHECK(has_error(gold, "site/matchers/unregistered.ts",
                  "no custom matcher is registered for site/matchers/unregistered.ts"));
  /* The feature-flag adapter: enabled, a variant, a failure. */
  CHECK(contains(gold, "\"component\":\"site/sections/NewCheckout.tsx\""));
  CHECK(contains(gold, "\"component\":\"site/sections/ArmB.tsx\""));
  CHECK(contains(gold, "\"component\":\"site/sections/NotBroken.tsx\""));
  CHECK(has_error(gold, "posthog/matchers/featureFlag.ts", "adapter failure"));
  /* The dangling-reference hook's value. */
  CHECK(contains(gold, "\"products\":{\"from\":\"the C hook\"}"));
  sitefile_string_free(gold);

  /* Another visitor, the same host: the matcher reads the context. The host may be freed as
   * soon as sitefile_resolve_begin has returned. */
  sitefile_resolution *res = NULL;
  EXPECT(sitefile_resolve_begin(site, "{\"url\": \"https://shop.example/\"}", host, &res),
         SITEFILE_STATUS_OK, "");
  sitefile_host_free(host);
  char *step = NULL;
  EXPECT(sitefile_resolution_next(res, &step), SITEFILE_STATUS_OK, "");
  CHECK(contains(step, "\"component\":\"site/sections/NotVip.tsx\""));
  CHECK(s.vip_calls == 2);
  sitefile_string_free(step);
  sitefile_resolution_free(res);
}

/* An adapter without a variant function: a rule naming a variant fails. */
static void adapter_without_variants(sitefile_site *site) {
  seen s = {0};
  sitefile_host *host = NULL;
  EXPECT(sitefile_host_new(&host), SITEFILE_STATUS_OK, "");
  EXPECT(sitefile_host_set_feature_flags(host, flag_enabled, NULL, &s), SITEFILE_STATUS_OK, "");
  char *page = resolve(site, "gold", host);
  sitefile_host_free(host);
  CHECK(contains(page, "\"component\":\"site/sections/NewCheckout.tsx\""));
  CHECK(contains(page, "\"component\":\"site/sections/ArmOther.tsx\""));
  CHECK(has_error(page, "posthog/matchers/featureFlag.ts",
                  "the feature-flag adapter has no getFeatureFlagVariant"));
  /* No matchers on this host: the custom ones fail, the page still renders. */
  CHECK(has_error(page, "site/matchers/vip.ts",
                  "no custom matcher is registered for site/matchers/vip.ts"));
  CHECK(contains(page, "\"component\":\"site/sections/NotVip.tsx\""));
  CHECK(s.flag_calls == 1);
  sitefile_string_free(page);
}

/* No host at all: custom matchers fail, flags warn, a dangling reference is null. */
static void no_host(sitefile_site *site) {
  char *page = resolve(site, "gold", NULL);
  CHECK(contains(page, "\"component\":\"site/sections/NotVip.tsx\""));
  CHECK(contains(page, "\"component\":\"site/sections/OldCheckout.tsx\""));
  CHECK(contains(page, "no feature flag adapter configured"));
  CHECK(contains(page, "dangling reference: site/loaders/missing.ts"));
  CHECK(contains(page, "\"products\":null"));
  sitefile_string_free(page);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <host-content.json>\n", argv[0]);
    return 2;
  }
  char *content = read_file(argv[1]);
  if (content == NULL) {
    fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  host_errors();
  const char *setup =
      "{\"customMatchers\": [\"site/matchers/vip.ts\", \"site/matchers/boom.ts\", "
      "\"site/matchers/silent.ts\", \"site/matchers/wrong-kind.ts\", "
      "\"site/matchers/unregistered.ts\"], "
      "\"featureFlagMatcher\": \"posthog/matchers/featureFlag.ts\", "
      "\"loaders\": [\"site/loaders/products.ts\"]}";
  sitefile_site *site = NULL;
  EXPECT(sitefile_site_from_content(content, setup, &site), SITEFILE_STATUS_OK, "");
  free(content);
  if (site == NULL) return 1;
  callbacks(site);
  adapter_without_variants(site);
  no_host(site);
  sitefile_site_free(site);

  if (failures > 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("sitefile C host callbacks: all checks passed\n");
  return 0;
}
