//! The `Site` facade through its public API: host callbacks per call, single-value and draft
//! resolution, reload with a hook, the edge plan and the decision after the origin, purges, the
//! admin protocol and the serde forms bindings exchange.

// These tests use only the site builder of the admin tests' helpers.
#[allow(dead_code)]
mod admin_site;

use serde_json::{Value as Json, json};
use sitefile_core::MatcherContext;
use sitefile_core::admin::{
    AdminOutcome, AdminRequest, RenderShellUpdate, RenderedSection, Schema,
};
use sitefile_core::content::Snapshot;
use sitefile_core::edge::{CspNonce, EdgePlan, WorkerOptions};
use sitefile_core::matchers::ExperimentsConfig;
use sitefile_core::resolve::{LoaderAnswer, Resolution, ResolveConfig, Step};
use sitefile_core::site::{EdgeHints, OriginAnswer, OriginOutcome};
use sitefile_core::value::{Value, intern};
use sitefile_core::{
    ErrorCode, HasErrorCode, Host, NoHost, Request, ResolveErrorEvent, Site, SiteSetup,
};
use std::cell::RefCell;
use std::collections::HashMap;

fn now() -> chrono::DateTime<chrono::Utc> {
    "2026-06-01T12:00:00Z".parse().unwrap()
}

fn site(blocks: Json, vars: &[(&str, &str)]) -> Site {
    let mut resolve = ResolveConfig::by_convention();
    resolve.matchers.register("site/matchers/vip.ts");
    site_with(blocks, resolve, vars)
}

/// A site serving `blocks` (a JSON object) with `resolve` and the environment `vars`.
fn site_with(blocks: Json, resolve: ResolveConfig, vars: &[(&str, &str)]) -> Site {
    let vars = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    admin_site::site(
        &blocks,
        resolve,
        Default::default(),
        vars,
        Default::default(),
    )
}

fn content() -> Json {
    json!({
        "pages-home": {"path": "/", "sections": [
            {"__resolveType": "Hero"},
            {"__resolveType": "website/flags/multivariate.ts", "variants": [
                {"rule": {"__resolveType": "site/matchers/vip.ts"},
                 "value": {"__resolveType": "site/sections/Vip.tsx", "tier": "gold"}},
                {"rule": {"__resolveType": "website/matchers/always.ts"},
                 "value": {"__resolveType": "site/sections/Plain.tsx"}}
            ]}
        ]},
        "Hero": {"__resolveType": "site/sections/Hero.tsx", "title": "Hello",
                 "products": {"__resolveType": "site/loaders/products.ts", "count": 2}}
    })
}

fn request(url: &str) -> Request {
    Request::new(url).unwrap().with_now(now())
}

/// Drives a resolution to its page, answering every loader with its props' `count`.
fn drive(mut resolution: Resolution, host: &dyn Host) -> Json {
    loop {
        match resolution.next(host).unwrap() {
            Step::NeedLoaders(calls) => {
                for call in calls {
                    let count = call.props.get("count").cloned().unwrap_or(Value::Null);
                    resolution.provide(call.id, Ok(count)).unwrap();
                }
            }
            Step::Done(page) => return serde_json::to_value(&*page).unwrap(),
        }
    }
}

fn components(page: &Json) -> Vec<&str> {
    page["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["component"].as_str().unwrap())
        .collect()
}

/// A host whose VIP matcher reads a cookie and fails without it, and that records every
/// `onResolveError` it is told of.
#[derive(Default)]
struct RecordingHost {
    errors: RefCell<Vec<ResolveErrorEvent>>,
}

impl Host for RecordingHost {
    fn custom_matcher(&self, _: &str, _: &Value, ctx: &MatcherContext<'_>) -> Result<bool, String> {
        match ctx.cookie("tier") {
            Some(tier) => Ok(tier == "gold"),
            None => Err("no tier cookie".into()),
        }
    }

    fn on_resolve_error(&self, event: &ResolveErrorEvent) {
        self.errors.borrow_mut().push(event.clone());
    }
}

#[test]
fn host_callbacks_are_passed_per_call_and_may_fail() {
    let site = site(content(), &[]);
    let host = RecordingHost::default();
    let gold = request("https://shop.example/").with_cookie("tier", "gold");
    let page = drive(site.resolve_page(gold, &host), &host);
    assert_eq!(
        components(&page),
        ["site/sections/Hero.tsx", "site/sections/Vip.tsx"]
    );
    assert_eq!(page["sections"][0]["props"]["products"], json!(2));
    assert!(host.errors.borrow().is_empty());

    let page = drive(
        site.resolve_page(request("https://shop.example/"), &host),
        &host,
    );
    assert_eq!(
        components(&page),
        ["site/sections/Hero.tsx", "site/sections/Plain.tsx"]
    );
    assert_eq!(
        page["effects"]["errors"][0]["resolveType"],
        "site/matchers/vip.ts"
    );
    assert_eq!(page["effects"]["errors"][0]["message"], "no tier cookie");
    let told = host.errors.borrow();
    assert_eq!(told.len(), 1, "onResolveError is told once per error");
    assert_eq!(told[0].message, "no tier cookie");
}

#[test]
fn a_single_value_resolves_with_its_loaders() {
    let site = site(content(), &[]);
    let saved = Value::from(json!({"__resolveType": "Hero"}));
    let page = drive(
        site.resolve_value(request("https://shop.example/"), &saved, &NoHost),
        &NoHost,
    );
    assert_eq!(page["page"], Json::Null);
    assert_eq!(page["sections"][0]["component"], "site/sections/Hero.tsx");
    assert_eq!(
        page["value"],
        json!({"__resolveType": "site/sections/Hero.tsx", "title": "Hello", "products": 2})
    );
    let props =
        Value::from(json!({"items": {"__resolveType": "site/loaders/products.ts", "count": 5}}));
    let page = drive(
        site.resolve_value(request("https://shop.example/"), &props, &NoHost),
        &NoHost,
    );
    assert_eq!(page["value"], json!({"items": 5}));
    // A block holding a plain value is that value: not a page section, so nothing is dropped.
    site.reload(br#"{"blocks": {"Title": "Sale"}}"#, now())
        .unwrap();
    let title = Value::from(json!({"__resolveType": "Title"}));
    let page = drive(
        site.resolve_value(request("https://shop.example/"), &title, &NoHost),
        &NoHost,
    );
    assert_eq!(page["value"], "Sale");
    assert!(page["effects"].get("errors").is_none(), "{page}");
}

#[test]
fn a_draft_overlay_is_seen_by_its_own_request_only() {
    let site = site(content(), &[]);
    let draft = vec![(
        intern("Hero"),
        Value::from(json!({"__resolveType": "site/sections/Hero.tsx", "title": "Draft"})),
    )];
    let before = site.revision();
    let page = drive(
        site.resolve_page_in_draft(request("https://shop.example/"), &draft, &NoHost),
        &NoHost,
    );
    assert_eq!(page["sections"][0]["props"]["title"], "Draft");
    let published = drive(
        site.resolve_page(request("https://shop.example/"), &NoHost),
        &NoHost,
    );
    assert_eq!(published["sections"][0]["props"]["title"], "Hello");
    assert_eq!(site.revision(), before, "the draft never becomes content");
    let deleted = vec![(intern("pages-home"), Value::Null)];
    let page = drive(
        site.resolve_page_in_draft(request("https://shop.example/"), &deleted, &NoHost),
        &NoHost,
    );
    assert_eq!(page["page"], Json::Null, "a null draft block deletes it");
}

/// The preview job `request` asks for.
fn preview_job(site: &Site, request: &AdminRequest) -> sitefile_core::admin::PreviewJob {
    match site.handle_admin(request, now()) {
        AdminOutcome::Preview(job) => job,
        other => panic!("not a preview: {other:?}"),
    }
}

#[test]
fn a_preview_resolves_from_its_path_device_and_overlay() {
    let mut content = content();
    content["Promo"] = json!({"__resolveType": "website/flags/multivariate.ts", "variants": [
        {"rule": {"__resolveType": "website/matchers/device.ts", "mobile": true},
         "value": {"__resolveType": "site/sections/MobilePromo.tsx"}},
        {"rule": {"__resolveType": "website/matchers/pathname.ts",
                  "pattern": "/sale", "includes": true},
         "value": {"__resolveType": "site/sections/SalePromo.tsx"}},
        {"rule": {"__resolveType": "website/matchers/always.ts"},
         "value": {"__resolveType": "site/sections/Plain.tsx"}}
    ]});
    let site = site(content, &[]);
    let desktop = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7)";
    let preview = |query: &str, body: Option<Json>| {
        let mut request = AdminRequest::new("GET", "/live/previews/site/sections/Banner.tsx")
            .with_query(query)
            .with_header("Host", "shop.example")
            .with_header("User-Agent", desktop);
        if let Some(body) = body {
            request.method = "POST".into();
            request = request.with_body(body.to_string().as_bytes());
        }
        let job = preview_job(&site, &request);
        drive(
            site.resolve_preview(&job, &request, now(), &NoHost)
                .unwrap(),
            &NoHost,
        )
    };
    let promo = json!({"promo": {"__resolveType": "Promo"},
                       "products": {"__resolveType": "site/loaders/products.ts", "count": 3}});
    let page = preview(&format!("props={promo}"), None);
    assert_eq!(page["sections"][0]["component"], "site/sections/Banner.tsx");
    assert_eq!(
        page["sections"][0]["props"]["promo"]["Component"], "site/sections/Plain.tsx",
        "{page}"
    );
    assert_eq!(
        page["sections"][0]["props"]["products"], 3,
        "the props' loaders run"
    );
    let page = preview(&format!("props={promo}&deviceHint=mobile"), None);
    assert_eq!(
        page["sections"][0]["props"]["promo"]["Component"],
        "site/sections/MobilePromo.tsx"
    );
    let page = preview(&format!("props={promo}&path=/sale/shoes"), None);
    assert_eq!(
        page["sections"][0]["props"]["promo"]["Component"],
        "site/sections/SalePromo.tsx"
    );
    // A `__resolveType` in `props` does not rename what is previewed (the path named it); in
    // the editor's `__props` form it names the component. Either way the job and the
    // resolution agree.
    let mut renamed = promo.clone();
    renamed["__resolveType"] = json!("site/sections/Other.tsx");
    for (body, component) in [
        (json!({"props": renamed}), "site/sections/Banner.tsx"),
        (json!({"__props": renamed}), "site/sections/Other.tsx"),
    ] {
        let page = preview("", Some(body));
        assert_eq!(page["sections"][0]["component"], component, "{page}");
        assert!(page["sections"][0]["props"].get("__resolveType").is_none());
    }
    // The editor's unsaved blocks are seen by this preview only.
    let overlay = json!({
        "props": promo,
        "__sitefile": {"Promo": {"__resolveType": "site/sections/Draft.tsx"}}
    });
    let page = preview("", Some(overlay));
    assert_eq!(
        page["sections"][0]["props"]["promo"]["Component"], "site/sections/Draft.tsx",
        "{page}"
    );
    let page = preview(&format!("props={promo}"), None);
    assert_eq!(
        page["sections"][0]["props"]["promo"]["Component"],
        "site/sections/Plain.tsx"
    );
    // A path that is no URL path is refused as a request error.
    let request = AdminRequest::new("GET", "/live/previews/site/sections/Banner.tsx")
        .with_header("Host", "bad host");
    let job = preview_job(&site, &request);
    let error = site
        .resolve_preview(&job, &request, now(), &NoHost)
        .err()
        .unwrap();
    assert_eq!(error.code(), ErrorCode::InvalidRequest);
}

#[test]
fn a_page_preview_resolves_as_the_pages_sections() {
    let site = site(content(), &[]);
    let body = json!({"path": "/", "sections": [
        {"__resolveType": "Hero"},
        {"__resolveType": "site/sections/Plain.tsx", "x": 1},
        {"__resolveType": "website/matchers/always.ts"}
    ]});
    let request = AdminRequest::new("POST", "/live/previews/website/pages/Page.tsx")
        .with_header("Host", "shop.example")
        .with_body(body.to_string().as_bytes());
    let job = preview_job(&site, &request);
    assert!(job.is_page());
    let page = drive(
        site.resolve_preview(&job, &request, now(), &NoHost)
            .unwrap(),
        &NoHost,
    );
    assert_eq!(
        components(&page),
        ["site/sections/Hero.tsx", "site/sections/Plain.tsx"],
        "{page}"
    );
    assert_eq!(page["sections"][0]["props"]["products"], 2, "loaders ran");
}

#[test]
fn section_loaders_replace_props_round_by_round_and_nested_sections_follow() {
    use sitefile_core::section_loaders::{SectionStep, sections_from_json};
    let mut resolve = ResolveConfig::by_convention();
    resolve
        .layout_sections
        .insert("site/sections/Header.tsx".into());
    let site = site_with(content(), resolve, &[]);
    let sections = sections_from_json(
        &json!([
            {"component": "site/sections/Shelf.tsx", "props": {"title": "t", "__pagePath": "/kept"}},
            {"component": "site/sections/Tabs.tsx", "props": {"tabs": [
                {"Component": "site/sections/Shelf.tsx", "props": {"title": "inner"}},
                {"Component": "site/sections/Plain.tsx", "props": {"inner":
                    {"Component": "site/sections/Shelf.tsx", "props": {"title": "below"}}}}
            ]}},
            {"component": "site/sections/Header.tsx", "props": {}},
            {"component": "site/sections/Broken.tsx", "props": {"x": 1}}
        ])
        .to_string(),
    )
    .unwrap();
    let with_loaders = ["Shelf", "Header", "Broken", "Tabs"]
        .map(|s| format!("site/sections/{s}.tsx"))
        .into_iter()
        .filter(|k| !k.ends_with("Tabs.tsx"))
        .collect();
    let mut run = site.run_section_loaders(
        &request("https://shop.example/c?q=1"),
        sections,
        with_loaders,
    );
    let mut rounds = Vec::new();
    let done = loop {
        match run.next().unwrap() {
            SectionStep::NeedLoaders(calls) => {
                rounds.push(calls.iter().map(|c| c.key.clone()).collect::<Vec<_>>());
                for call in calls {
                    let answer = match call.key.as_str() {
                        "site/sections/Shelf.tsx" => {
                            let title = call.props.get("title").map(Json::from);
                            let mut props = json!({
                                "title": title,
                                "path": call.props.get("__pagePath").map(Json::from),
                                "url": call.props.get("__pageUrl").map(Json::from),
                                "products": [1, 2]
                            });
                            if title == Some(json!("t")) {
                                props["more"] = json!({"Component": "site/sections/Shelf.tsx",
                                                       "props": {"title": "deep"}});
                            }
                            Ok(Value::from(props))
                        }
                        "site/sections/Header.tsx" => Err("header down".to_string()),
                        _ => Err("boom".to_string()),
                    };
                    run.provide(call.id, answer).unwrap();
                }
            }
            SectionStep::Done(done) => break done,
        }
    };
    assert_eq!(
        rounds,
        [
            vec![
                "site/sections/Shelf.tsx",
                "site/sections/Shelf.tsx",
                "site/sections/Shelf.tsx",
                "site/sections/Header.tsx",
                "site/sections/Broken.tsx"
            ],
            vec!["site/sections/Shelf.tsx"]
        ],
        "the nested Shelves of sections without a loader go with the first round; one a \
         loader returned, with the next"
    );
    assert_eq!(
        serde_json::to_value(&done.sections).unwrap()[0]["props"]["more"]["props"]["title"],
        "deep"
    );
    let sections = serde_json::to_value(&done.sections).unwrap();
    assert_eq!(
        sections[0]["props"]["path"], "/kept",
        "a section's own __pagePath is kept"
    );
    assert_eq!(sections[0]["props"]["url"], "https://shop.example/c?q=1");
    assert_eq!(sections[1]["props"]["tabs"][0]["props"]["title"], "inner");
    assert_eq!(
        sections[1]["props"]["tabs"][1]["props"]["inner"]["props"]["products"],
        json!([1, 2]),
        "a nested section without a loader is looked through"
    );
    assert_eq!(
        sections[1]["props"]["tabs"][0]["props"]["products"],
        json!([1, 2])
    );
    assert_eq!(
        sections[3]["props"],
        json!({"x": 1}),
        "a failed loader keeps the props"
    );
    let contexts: Vec<_> = done
        .effects
        .errors
        .iter()
        .map(|e| (e.resolve_type.as_str(), e.context.as_str()))
        .collect();
    assert_eq!(
        contexts,
        [
            ("site/sections/Header.tsx", "Section loader"),
            ("site/sections/Broken.tsx", "Section loader")
        ]
    );
    assert!(done.effects.degraded, "Broken is not a layout section");
    assert!(run.next().is_err(), "next after done is misuse");
}

#[test]
fn the_render_shell_wraps_every_preview_and_can_be_set_later() {
    let site = site(content(), &[]);
    let frame =
        |site: &Site| match site.handle_admin(&AdminRequest::new("GET", "/live/previews"), now()) {
            AdminOutcome::Respond(response) => String::from_utf8(response.body.to_vec()).unwrap(),
            other => panic!("{other:?}"),
        };
    assert!(frame(&site).starts_with("<!DOCTYPE html><html lang=\"en\"><head>"));
    // `createAdminSetup({css, fonts})`, then `setRenderShell({theme, lang})`: the second call
    // sets only what it gives.
    site.set_render_shell(RenderShellUpdate {
        css: Some("/styles.css".into()),
        fonts: Some(vec!["https://fonts.example/inter.css".into()]),
        ..RenderShellUpdate::default()
    });
    site.set_render_shell(RenderShellUpdate {
        theme: Some("light".into()),
        lang: Some("pt-BR".into()),
        ..RenderShellUpdate::default()
    });
    let html = frame(&site);
    assert!(
        html.starts_with("<!DOCTYPE html><html lang=\"pt-BR\" data-theme=\"light\">"),
        "{html}"
    );
    assert!(
        html.contains(
            "<link rel=\"stylesheet\" href=\"https://fonts.example/inter.css\">\
             <link rel=\"stylesheet\" href=\"/styles.css\">"
        ),
        "the fonts and the stylesheet are kept: {html}"
    );
    let request = AdminRequest::new("GET", "/live/previews/site/sections/Hero.tsx");
    let job = preview_job(&site, &request);
    let response = job.finish(Ok(vec![RenderedSection {
        key: "site/sections/Hero.tsx".into(),
        html: Ok("<h1>Hi</h1>".into()),
    }]));
    let body = String::from_utf8(response.body.to_vec()).unwrap();
    assert!(body.contains("data-theme=\"light\""), "{body}");
    assert!(
        body.contains(
            "<section data-manifest-key=\"site/sections/Hero.tsx\"><h1>Hi</h1></section>"
        ),
        "{body}"
    );
}

#[test]
fn a_loader_assigns_an_experiment_arm_that_the_page_keeps_sticky() {
    let site = site(content(), &[]);
    let config = ExperimentsConfig::from_value(&Value::from(json!({"experiments": [
        {"key": "price", "variants": [{"id": "low", "weight": 1, "payload": {"p": 9}},
                                      {"id": "high", "weight": 1, "payload": {"p": 12}}]}
    ]})));
    let experiment = config.experiment("price").unwrap();
    // The loader of the round asks for the visitor's arm, as `resolveExperimentVariant` does.
    let run = |req: Request| {
        let mut resolution = site.resolve_page(req, &NoHost);
        let mut assignment = None;
        let page = loop {
            match resolution.next(&NoHost).unwrap() {
                Step::NeedLoaders(calls) => {
                    let arm = resolution.assign_experiment(experiment).unwrap().unwrap();
                    for call in calls {
                        resolution
                            .provide(call.id, Ok(arm.payload.clone()))
                            .unwrap();
                    }
                    assignment = Some(arm);
                }
                Step::Done(page) => break serde_json::to_value(&*page).unwrap(),
            }
        };
        assert!(matches!(
            resolution.assign_experiment(experiment),
            Err(e) if e.code() == ErrorCode::Finished
        ));
        (assignment.unwrap(), page)
    };
    let (first, page) = run(request("https://shop.example/"));
    assert!(first.is_fresh);
    assert_eq!(
        page["sections"][0]["props"]["products"],
        serde_json::to_value(&first.payload).unwrap()
    );
    let set_cookie = page["effects"]["setCookies"][0].as_str().unwrap();
    let cookie = set_cookie
        .split(';')
        .next()
        .unwrap()
        .split_once('=')
        .unwrap()
        .1;
    for seed in 0..10 {
        let again = request("https://shop.example/")
            .with_seed(seed)
            .with_cookie("platform_segment", cookie);
        let (arm, page) = run(again);
        assert_eq!(arm.variant_id, first.variant_id);
        assert!(!arm.is_fresh);
        assert_eq!(page["effects"]["setCookies"], json!([]));
    }
}

#[test]
fn a_setup_is_read_from_its_json_form() {
    let setup = SiteSetup::from_json(
        &json!({
            "sections": ["./sections/Hero.tsx"],
            "loaders": ["site/loaders/products.ts"],
            "cachedLoaders": {"site/loaders/products.ts": {"maxAgeMs": 1000}},
            "customMatchers": ["site/matchers/vip.ts"],
            "env": {"NODE_ENV": "production"},
            "options": {"deviceSpecificKeys": false},
            "admin": {"maxBodyBytes": 10, "renderShell": {"theme": "light"}}
        })
        .to_string(),
    )
    .unwrap();
    assert!(setup.resolve.sections.contains("site/sections/Hero.tsx"));
    assert!(
        !setup.resolve.sections.contains("site/sections/Vip.tsx"),
        "only those listed"
    );
    assert!(setup.resolve.loaders.contains("site/loaders/products.ts"));
    assert_eq!(
        setup.resolve.cached_loaders["site/loaders/products.ts"].max_age_ms,
        1000
    );
    assert!(!setup.worker.device_specific_keys);
    assert_eq!(setup.admin.max_body_bytes, 10);
    assert_eq!(setup.admin.render_shell.theme.as_deref(), Some("light"));
    assert_eq!(setup.vars["NODE_ENV"], "production");
    let site = Site::new(Snapshot::from_blocks(Vec::new()), setup).unwrap();
    assert_eq!(site.admin_config().max_body_bytes, 10);

    let by_convention = SiteSetup::from_json("{}").unwrap();
    assert!(
        by_convention
            .resolve
            .sections
            .contains("site/sections/Anything.tsx")
    );
    for bad in [
        r#"{"sectons": []}"#,
        r#"{"options": {"geoCacheKey": "planet"}}"#,
        r#"{"productionOrigins": ["shop.com"]}"#,
        "[",
    ] {
        let error = SiteSetup::from_json(bad).err().unwrap();
        assert_eq!(error.code(), ErrorCode::InvalidConfig, "{bad}: {error}");
    }
}

#[test]
fn reload_runs_the_hook_before_the_swap_and_a_failing_hook_keeps_the_content() {
    let site = site(content(), &[]);
    let before = site.revision();
    let mut seen = None;
    let response = site
        .reload_with(br#"{"blocks": {"Hero": null}}"#, now(), &mut |snapshot| {
            seen = Some(snapshot.revision().to_string());
            Ok(true)
        })
        .unwrap();
    assert!(response.kv_written);
    assert_eq!(Some(response.revision.clone()), seen);
    assert_eq!(site.revision(), response.revision);
    let refused = site
        .reload_with(br#"{"blocks": {"x": {}}}"#, now(), &mut |_| {
            Err("kv down".into())
        })
        .unwrap_err();
    assert_eq!(refused.code(), ErrorCode::HookFailed);
    assert_eq!(site.revision(), response.revision, "content unchanged");
    assert_ne!(site.revision(), before);
    let bad = site.reload(b"[1]", now()).unwrap_err();
    assert_eq!(bad.code().as_str(), "INVALID_CONTENT");
}

#[test]
fn derived_facts_follow_every_swap() {
    let site = site(content(), &[]);
    let plan = site.edge_plan(&request("https://shop.example/old"));
    assert_ne!(plan.action.as_str(), "redirect");
    site.reload(
        br#"{"blocks": {"r": {"__resolveType": "website/loaders/redirect.ts",
            "redirect": {"from": "/old", "to": "/new", "type": "permanent"}}}}"#,
        now(),
    )
    .unwrap();
    let plan = site.edge_plan(&request("https://shop.example/old"));
    let form = serde_json::to_value(&plan).unwrap();
    assert_eq!(form["action"], "redirect");
    assert_eq!(form["status"], 301);
    assert_eq!(form["headers"], json!([["Location", "/new"]]));
}

/// Worker options set while reloads swap content never leave the edge with the redirects of
/// an older snapshot than the one serving.
#[test]
fn worker_options_set_during_reloads_never_leave_facts_of_an_older_snapshot() {
    let site = std::sync::Arc::new(site(content(), &[]));
    let redirect = |n: usize| {
        json!({"blocks": {"r": {"__resolveType": "website/loaders/redirect.ts",
            "redirect": {"from": "/old", "to": format!("/new-{n}"), "type": "permanent"}}}})
    };
    let reloader = {
        let site = site.clone();
        std::thread::spawn(move || {
            for n in 0..200 {
                let body = redirect(n).to_string();
                site.reload(body.as_bytes(), now()).unwrap();
            }
        })
    };
    while !reloader.is_finished() {
        site.set_worker_options(WorkerOptions::default());
    }
    reloader.join().unwrap();
    let plan = serde_json::to_value(site.edge_plan(&request("https://shop.example/old"))).unwrap();
    assert_eq!(plan["headers"], json!([["Location", "/new-199"]]));
}

#[test]
fn worker_options_given_after_setup_replace_the_edge_policy_and_the_purge_token() {
    let site = site(content(), &[("PURGE_TOKEN", "p"), ("OTHER_TOKEN", "o")]);
    let plan = |url: &str| serde_json::to_value(site.edge_plan(&request(url))).unwrap();
    assert_eq!(plan("https://shop.example/blog/x")["action"], "cache");
    let purge = |token: &str| {
        let request = AdminRequest::new("POST", "/_cache/purge-loaders")
            .with_header("Authorization", &format!("Bearer {token}"));
        match site.handle_admin(&request, now()) {
            AdminOutcome::Respond(response) => response.status,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(purge("p"), 200);
    let liveness = AdminRequest::new("GET", "/platform/_liveness");
    assert_eq!(
        site.handle_edge_admin(&liveness, now()),
        AdminOutcome::Pass,
        "without `admin` the worker entry serves no admin route"
    );
    let purge_request = AdminRequest::new("POST", "/_cache/purge-loaders");
    assert!(matches!(
        site.handle_edge_admin(&purge_request, now()),
        AdminOutcome::Respond(_)
    ));
    site.set_render_shell(RenderShellUpdate {
        lang: Some("pt".into()),
        ..RenderShellUpdate::default()
    });
    let options = WorkerOptions::from_json(&json!({
        "extraBypassPaths": ["/blog/"], "purgeTokenEnv": "OTHER_TOKEN"
    }))
    .unwrap();
    site.set_worker_options(options);
    assert_eq!(plan("https://shop.example/blog/x")["action"], "bypass");
    assert!(matches!(
        site.handle_edge_admin(&liveness, now()),
        AdminOutcome::Pass
    ));
    let options =
        json!({"extraBypassPaths": ["/blog/"], "purgeTokenEnv": "OTHER_TOKEN", "admin": {}});
    site.set_worker_options(WorkerOptions::from_json(&options).unwrap());
    assert!(matches!(
        site.handle_edge_admin(&liveness, now()),
        AdminOutcome::Respond(_)
    ));
    assert_eq!(purge("p"), 401);
    assert_eq!(purge("o"), 200);
    assert_eq!(
        site.admin_config().render_shell.lang.as_deref(),
        Some("pt"),
        "the render shell is kept"
    );
}

#[test]
fn the_edge_plan_and_the_after_origin_decision_merge_and_feed_the_purge_index() {
    let site = site(content(), &[]);
    let req = request("https://shop.example/?utm_source=x");
    let plan = site.edge_plan(&req);
    assert!(plan.cacheable);
    let key = plan.key.as_ref().unwrap().as_str().to_string();
    let decision = site.after_origin(
        &plan,
        &OriginAnswer {
            status: 200,
            headers: vec![("Content-Type".into(), "text/html".into())],
        },
    );
    let form = serde_json::to_value(&decision).unwrap();
    assert_eq!(form["cacheable"], true);
    assert_eq!(form["originStatus"], 200);
    assert!(form["storeHeaders"].is_array());
    assert_eq!(
        site.purge("/"),
        vec![key],
        "a stored key is reachable by purge"
    );
    assert!(site.purge("/").is_empty());

    // A private Set-Cookie is not stored: the merged plan says why.
    let decision = site.after_origin(
        &plan,
        &OriginAnswer {
            status: 200,
            headers: vec![("Set-Cookie".into(), "session=1".into())],
        },
    );
    assert!(!decision.plan.cacheable);
    assert!(decision.store.is_none());
    assert_eq!(decision.plan.reason.as_deref(), Some("private-set-cookie"));
    assert!(site.purge("/").is_empty());

    // A request carrying a matcher override bypasses the cache: core reads it from the request.
    let forced = request("https://shop.example/?x-platform-matchers-override=VIP%3D1");
    assert!(!site.edge_plan(&forced).cacheable);
}

#[test]
fn the_sites_own_functions_reach_the_edge_plan_as_data() {
    let options = WorkerOptions::from_json(&json!({
        "csp": ["default-src 'self'"], "cspMode": "enforce"
    }))
    .unwrap();
    let blocks = Snapshot::from_blocks(Vec::new());
    let setup = SiteSetup::new(ResolveConfig::by_convention(), options, HashMap::new());
    let site = Site::new(blocks, setup).unwrap();
    let home = request("https://shop.example/");
    let hints = |hints: Json| serde_json::from_value::<EdgeHints>(hints).unwrap();
    let plain = site.edge_plan_with(&home, &hints(json!({}))).unwrap();
    assert_eq!(
        plain.key,
        site.edge_plan(&home).key,
        "no hints: the plain plan"
    );

    // buildSegment's answer keys the cache; a logged-in visitor is never cached.
    let channel = site
        .edge_plan_with(&home, &hints(json!({"segment": {"salesChannel": "2"}})))
        .unwrap();
    assert!(channel.cacheable);
    assert_ne!(channel.key, plain.key);
    let logged_in = site
        .edge_plan_with(&home, &hints(json!({"segment": {"loggedIn": true}})))
        .unwrap();
    assert!(!logged_in.cacheable, "{logged_in:?}");

    // detectProfile's answer chooses the profile, but cannot loosen a cart path.
    let private = site
        .edge_plan_with(&home, &hints(json!({"profile": "private"})))
        .unwrap();
    assert_eq!(private.profile.as_str(), "private");
    let cart = request("https://shop.example/cart");
    let loosened = site
        .edge_plan_with(&cart, &hints(json!({"profile": "static"})))
        .unwrap();
    assert_eq!(loosened.profile.as_str(), "cart");
    let unknown = site
        .edge_plan_with(&home, &hints(json!({"profile": "forever"})))
        .unwrap_err();
    assert_eq!(unknown.code(), ErrorCode::InvalidConfig);
    assert!(unknown.to_string().contains("forever"), "{unknown}");

    // The nonce's bytes come from the host; an uncached page carries it in its CSP, which an
    // HTML answer gets once the origin answered (a JSON one gets no CSP at all).
    let nonce = [7u8; 16];
    let answered = |plan: &EdgePlan, content_type: &str| {
        let origin = OriginAnswer {
            status: 200,
            headers: vec![("Content-Type".into(), content_type.into())],
        };
        site.after_origin(plan, &origin).plan.headers
    };
    let csp = |plan: &EdgePlan| {
        answered(plan, "text/html; charset=utf-8")
            .into_iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-security-policy"))
            .map(|(_, v)| v)
    };
    let uncached = site
        .edge_plan_with(&cart, &hints(json!({"nonce": nonce})))
        .unwrap();
    let expected = format!("'nonce-{}'", CspNonce::from_bytes(nonce).as_str());
    assert!(
        csp(&uncached).is_some_and(|v| v.contains(&expected)),
        "{:?}",
        uncached.html_headers
    );
    assert!(
        !answered(&uncached, "application/json")
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-security-policy")),
        "a JSON answer gets no CSP"
    );
    let cached = site
        .edge_plan_with(&home, &hints(json!({"nonce": nonce})))
        .unwrap();
    assert!(cached.cacheable);
    assert!(!csp(&cached).unwrap_or_default().contains("nonce-"));
    assert!(
        serde_json::from_value::<EdgeHints>(json!({"segmnt": {}})).is_err(),
        "a misspelled hint is refused"
    );
}

#[test]
fn a_stored_copy_is_served_by_the_profiles_edge_window() {
    let site = site(content(), &[]);
    let plan = site.edge_plan(&request("https://shop.example/camisetas"));
    let window = site.policy().options().profiles.get(plan.profile).edge;
    assert!(window.fresh > 0 && window.swr > 0 && window.sie > window.swr);
    let fresh = u64::from(window.fresh);
    let state = |age: u64, origin: Option<OriginOutcome>| {
        let copy = site.stored_copy(&plan, age, origin.as_ref());
        serde_json::to_value(&copy).unwrap()
    };
    assert_eq!(
        state(0, None),
        json!({"state": "HIT", "headers": [["X-Cache", "HIT"]]})
    );
    assert_eq!(state(fresh, None)["state"], "STALE");
    assert_eq!(
        state(fresh, None)["headers"][1],
        json!(["X-Cache-Age", fresh.to_string()])
    );
    let past_swr = fresh + u64::from(window.swr);
    assert_eq!(
        state(past_swr, None)["state"],
        "MISS",
        "too old: ask the origin"
    );
    let failed = |status: Option<u16>, degraded: bool| OriginOutcome { status, degraded };
    let stale_error = state(past_swr, Some(failed(Some(503), false)));
    assert_eq!(stale_error["state"], "STALE-ERROR");
    assert!(
        stale_error["headers"]
            .as_array()
            .unwrap()
            .contains(&json!(["X-Cache-Origin-Status", "503"])),
        "{stale_error}"
    );
    assert_eq!(
        state(past_swr, Some(failed(None, false)))["state"],
        "STALE-ERROR"
    );
    assert_eq!(
        state(past_swr, Some(failed(Some(200), true)))["state"],
        "STALE-ERROR"
    );
    assert_eq!(
        state(past_swr, Some(failed(Some(200), false)))["state"],
        "MISS"
    );
    let past_sie = fresh + u64::from(window.sie);
    assert_eq!(
        state(past_sie, Some(failed(Some(503), false)))["state"],
        "MISS"
    );
    let outcome: OriginOutcome = serde_json::from_value(json!({"status": null})).unwrap();
    assert_eq!(outcome, failed(None, false));
}

#[test]
fn the_admin_protocol_is_answered_by_the_site() {
    let site = site(content(), &[("NODE_ENV", "development")]);
    let read = site.handle_admin(&AdminRequest::new("GET", "/.sitefile"), now());
    let AdminOutcome::Respond(response) = read else {
        panic!("GET /.sitefile is answered by core");
    };
    assert_eq!(response.status, 200);
    let etag = response
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("etag"))
        .map(|(_, v)| v.clone())
        .unwrap();
    assert_eq!(etag, format!("\"{}\"", site.revision()));

    let meta = AdminRequest::new("GET", "/live/_meta");
    let AdminOutcome::Respond(response) = site.handle_admin(&meta, now()) else {
        panic!("meta is answered by core");
    };
    assert_eq!(response.status, 503);
    site.set_schema(
        Schema::from_json(br#"{"schema": {"definitions": {}}, "manifest": {"blocks": {}}}"#)
            .unwrap(),
    );
    let AdminOutcome::Respond(response) = site.handle_admin(&meta, now()) else {
        panic!("meta is answered by core");
    };
    assert_eq!(response.status, 200);

    let reload =
        AdminRequest::new("POST", "/.sitefile").with_body(br#"{"blocks": {"x": {}}}"#.to_vec());
    let AdminOutcome::Reload(job) = site.handle_admin(&reload, now()) else {
        panic!("an authorized reload is the host's to apply");
    };
    assert!(
        site.snapshot().block("x").is_none(),
        "not applied until the host applies it"
    );
    let refused = job.clone().apply(&site, &mut |_| Err("kv down".into()));
    assert_eq!(refused.status, 503);
    assert!(
        site.snapshot().block("x").is_none(),
        "a failed write keeps the content"
    );
    let applied = job.apply(&site, &mut |_| Ok(true));
    assert_eq!(applied.status, 200);
    assert!(site.snapshot().block("x").is_some());
}

#[test]
fn loader_calls_and_steps_have_one_serde_form() {
    let site = site(content(), &[]);
    let mut resolution = site.resolve_page(request("https://shop.example/"), &NoHost);
    let step = resolution.next(&NoHost).unwrap();
    let form = serde_json::to_value(&step).unwrap();
    assert_eq!(form["step"], "needLoaders");
    let call = &form["value"][0];
    assert_eq!(call["id"], 0);
    assert_eq!(call["key"], "site/loaders/products.ts");
    assert_eq!(call["props"]["count"], 2);
    assert_eq!(call["props"]["__pagePath"], "/");
    assert!(call.get("refresh").is_none());
    assert_eq!(step.to_json_bytes(), serde_json::to_vec(&step).unwrap());
    let answer: LoaderAnswer = serde_json::from_value(json!({"id": 0, "value": [1, 2]})).unwrap();
    resolution.provide(answer.id, answer.into_result()).unwrap();
    let step = resolution.next(&NoHost).unwrap();
    assert_eq!(step.to_json_bytes(), serde_json::to_vec(&step).unwrap());
    let done = serde_json::to_value(step).unwrap();
    assert_eq!(done["step"], "done");
    assert_eq!(done["value"]["page"], "pages-home");
    assert_eq!(
        done["value"]["sections"][0]["props"]["products"],
        json!([1, 2])
    );
    let failed: LoaderAnswer = serde_json::from_value(json!({"id": 3, "error": "boom"})).unwrap();
    assert_eq!(failed.into_result(), Err("boom".to_string()));
    let nothing: LoaderAnswer = serde_json::from_value(json!({"id": 3})).unwrap();
    assert_eq!(nothing.into_result(), Ok(Value::Null));
    assert!(serde_json::from_value::<LoaderAnswer>(json!({"id": 3, "valu": 1})).is_err());
}

/// How many loader calls two resolutions of `/` hand out when `products.ts` is a cached loader
/// and the environment is `vars`.
fn calls_over_two_requests(vars: &[(&str, &str)]) -> usize {
    use sitefile_core::loader_cache::Freshness;
    let mut resolve = ResolveConfig::by_convention();
    resolve.cached_loaders.insert(
        "site/loaders/products.ts".into(),
        Freshness {
            max_age_ms: 60_000,
            stale_ms: 0,
        },
    );
    let site = site_with(content(), resolve, vars);
    let mut handed = 0;
    for _ in 0..2 {
        let page = site
            .resolve_page(request("https://shop.example/"), &NoHost)
            .run(|_| {
                handed += 1;
                Ok(Value::from(7))
            });
        assert_eq!(Json::from(&page.sections[0].props)["products"], json!(7));
    }
    handed
}

#[test]
fn the_environment_switches_the_loader_cache_of_a_site() {
    assert_eq!(
        calls_over_two_requests(&[]),
        1,
        "the second request is a hit"
    );
    assert_eq!(
        calls_over_two_requests(&[("PLATFORM_CACHE_DISABLE", "true")]),
        2
    );
    assert_eq!(calls_over_two_requests(&[("NODE_ENV", "development")]), 2);
}

/// A long string of content (1 KB and more) is kept in a process-wide table with room for its
/// JSON; dropping the site that alone held it frees it at once, not at some later sweep.
#[test]
fn dropping_a_site_frees_the_long_strings_of_its_content() {
    let long = "a".repeat(4096);
    let bundle = json!({"Notice": {"text": long}}).to_string();
    let snapshot = sitefile_core::content::load_bundle(bundle.into_bytes()).unwrap();
    let site = Site::new(snapshot, SiteSetup::default()).unwrap();
    let text = match site.snapshot().block("Notice") {
        Some(Value::Object(notice)) => match notice.get("text") {
            Some(Value::String(text)) => std::sync::Arc::downgrade(text),
            other => panic!("not a string: {other:?}"),
        },
        other => panic!("not an object: {other:?}"),
    };
    assert!(text.upgrade().is_some(), "the site holds its content");
    drop(site);
    assert!(
        text.upgrade().is_none(),
        "the long string outlived the site that alone held it"
    );
}

/// Page JSON writes the page with the names and secrets of the content that served when the
/// request came; its sections are resolved on that content too, so a reload in between cannot
/// mix two contents in one body.
#[test]
fn page_json_resolves_on_the_content_its_job_was_made_with() {
    let marked = |mark: &str| {
        let mut blocks = content();
        blocks["pages-home"]["name"] = json!(mark);
        blocks["Hero"]["title"] = json!(mark);
        blocks
    };
    let site = site(marked("mark-1"), &[]);
    let asked = request("https://shop.example/?asJson");
    let Some(sitefile_core::page_json::PageJsonOutcome::Resolve(job)) = site.page_json(&asked)
    else {
        panic!("?asJson is a page JSON job");
    };
    let reload = json!({"blocks": {"pages-home": marked("mark-2")["pages-home"],
                                   "Hero": marked("mark-2")["Hero"]}});
    site.reload(reload.to_string().as_bytes(), now()).unwrap();
    let mut resolution = site.resolve_page_json(&job, asked, &NoHost);
    let page = loop {
        match resolution.next(&NoHost).unwrap() {
            Step::NeedLoaders(calls) => {
                for call in calls {
                    resolution.provide(call.id, Ok(Value::Null)).unwrap();
                }
            }
            Step::Done(page) => break page,
        }
    };
    let body = String::from_utf8(job.finish(&page, &[]).body).unwrap();
    assert!(body.contains("\"name\":\"mark-1\""), "{body}");
    assert!(body.contains("\"title\":\"mark-1\""), "{body}");
    assert!(!body.contains("mark-2"), "one content per body: {body}");
}

/// Runs the section loaders of one layout header (`layoutSections`) for `url`; `during` runs
/// between handing out the calls and answering them. The keys of the sections whose loaders
/// were called.
fn header_loaders(site: &Site, url: &str, during: impl FnOnce()) -> Vec<String> {
    use sitefile_core::section_loaders::SectionStep;
    let sections = sitefile_core::sections_from_json(
        &json!([{"component": "site/sections/Header.tsx", "props": {"menu": "m"}}]).to_string(),
    )
    .unwrap();
    let with_loaders = ["site/sections/Header.tsx".to_string()].into();
    let mut run = site.run_section_loaders(&request(url), sections, with_loaders);
    let mut called = Vec::new();
    let mut during = Some(during);
    while let SectionStep::NeedLoaders(calls) = run.next().unwrap() {
        if let Some(during) = during.take() {
            during();
        }
        for call in calls {
            called.push(call.key.clone());
            run.provide(call.id, Ok(Value::from(json!({"links": 1}))))
                .unwrap();
        }
    }
    called
}

#[test]
fn a_loader_purge_during_a_run_keeps_that_runs_layout_output_out() {
    let mut resolve = ResolveConfig::by_convention();
    resolve
        .layout_sections
        .insert("site/sections/Header.tsx".into());
    let site = site_with(json!({}), resolve, &[]);
    // A run that began before the purge keeps nothing: the next run calls the loader again.
    assert_eq!(
        header_loaders(&site, "https://shop.example/a", || site.purge_loaders()),
        ["site/sections/Header.tsx"]
    );
    assert_eq!(
        header_loaders(&site, "https://shop.example/b", || {}),
        ["site/sections/Header.tsx"]
    );
    // Then the output is kept and shared.
    assert!(header_loaders(&site, "https://shop.example/c", || {}).is_empty());
    // A forced variant or a draft neither reads nor keeps outputs.
    let forced = "https://shop.example/d?x-platform-matchers-override=Promo%3D1";
    assert_eq!(
        header_loaders(&site, forced, || {}),
        ["site/sections/Header.tsx"]
    );
    let draft = "https://shop.example/e?__draft=api.example/drafts/x@v1";
    assert_eq!(
        header_loaders(&site, draft, || {}),
        ["site/sections/Header.tsx"]
    );
}
