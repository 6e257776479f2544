//! `sitefile_edge_exchange`: one request through the edge cache, the core's exchange driven from
//! C — each step out as JSON, the host's answer in as JSON — so a C host gets a working edge
//! cache by doing the I/O each step names (its store, its origin, its clock).

use crate::args::{handle, handle_mut, out, parse_json, text};
use crate::edge::edge_request;
use crate::site::sitefile_site;
use crate::status::{Failure, guard, guard_void, sitefile_status};
use crate::strings::json_string;
use sitefile_core::{EdgeExchange, TimedAnswer};
use std::ffi::c_char;

/// The edge exchange of one request. One thread at a time drives it; it keeps what it needs of
/// its site, so it stays valid after `sitefile_site_free`. Free it with
/// `sitefile_edge_exchange_free` (an exchange freed while it leads a flight of collapsed misses
/// lands that flight as failed: wake its followers).
#[allow(non_camel_case_types)]
pub struct sitefile_edge_exchange {
    exchange: EdgeExchange,
}

/// Starts the edge exchange of a request (`request_json`: the request form of
/// `sitefile_resolve_begin`; `hints_json`: as for `sitefile_edge_plan_new`, NULL: none).
/// `cache`: the host has a store (without one every request goes to the origin). An unknown
/// profile is `SITEFILE_STATUS_INVALID_CONFIG`. On success `*out_exchange` is freed with
/// `sitefile_edge_exchange_free`.
///
/// # Safety
/// `site` is NULL or a live site; the strings are NULL or NUL-terminated; `out_exchange` is NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_edge_exchange_new(
    site: *const sitefile_site,
    request_json: *const c_char,
    hints_json: *const c_char,
    cache: bool,
    out_exchange: *mut *mut sitefile_edge_exchange,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_exchange, (site, request, hints)) = unsafe {
            (
                out(out_exchange, "out_exchange")?,
                edge_request(site, request_json, hints_json)?,
            )
        };
        let exchange = site
            .site
            .edge_exchange(&request, &hints, cache)
            .map_err(|e| Failure::of(&e))?;
        *out_exchange = Box::into_raw(Box::new(sitefile_edge_exchange { exchange }));
        Ok(())
    })
}

/// The next step as JSON in `*out_json` (free with `sitefile_string_free`): `{"step":
/// "lookup", "key"}` (answer the stored copy's head), `{"step": "askOrigin", "headers", "lead",
/// "deadlineMs"}` (forward the request with `headers` set; answer its head, or `originFailed`
/// past `deadlineMs`), `{"step": "follow", "flight", "deadlineMs"}` (wait until that flight
/// settles, unless `sitefile_edge_exchange_followed_flight_landed`; answer `followed`),
/// `{"step": "delete", "keys"}`, `{"step": "refresh"}` (take it with
/// `sitefile_edge_exchange_take_refresh` and drive it beside this one), `{"step": "respond",
/// "status", "headers", "body": "empty"|"stored"|"origin", "store": {"key", "status", "headers",
/// "maxAge"}|null}` (with `store`: keep the body as it streams, then answer `kept`), `{"step":
/// "settle", "flight"}` (wake that flight's followers), `{"step": "fail", "message"}` (answer
/// the visitor 502) or `{"step": "done"}`. A step waiting for its answer comes again.
///
/// # Safety
/// `exchange` is NULL or a live exchange no other thread is using; `out_json` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_edge_exchange_next(
    exchange: *mut sitefile_edge_exchange,
    out_json: *mut *mut c_char,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_json, exchange) = unsafe {
            (
                out(out_json, "out_json")?,
                handle_mut(exchange, "exchange")?,
            )
        };
        *out_json = json_string(&exchange.exchange.next_step())?;
        Ok(())
    })
}

/// Answers the step handed out (`answer_json`: `{"answer": "lookup", "copy": {"status",
/// "headers"}|null}`, `{"answer": "origin", "status", "headers"}`, `{"answer": "originFailed",
/// "reason"?}`, `{"answer": "followed"}` or `{"answer": "kept", "kept": bool}`, each with
/// `"nowMs"`: the host's clock in milliseconds since the epoch). An answer that does not fit
/// the step is `SITEFILE_STATUS_UNKNOWN_CALL`, one after `done` `SITEFILE_STATUS_FINISHED`; an
/// origin header that is not a valid HTTP field is `SITEFILE_STATUS_INVALID_JSON`.
///
/// # Safety
/// `exchange` is NULL or a live exchange no other thread is using; `answer_json` is NULL or
/// NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_edge_exchange_answer(
    exchange: *mut sitefile_edge_exchange,
    answer_json: *const c_char,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (exchange, answer) = unsafe {
            (
                handle_mut(exchange, "exchange")?,
                text(answer_json, "answer_json")?,
            )
        };
        let timed: TimedAnswer = parse_json(answer, "edge exchange answer")?;
        exchange
            .exchange
            .answer(timed.answer, timed.now_ms)
            .map_err(|e| Failure::of(&e))
    })
}

/// Whether the flight a `follow` step waits for has landed already (a host registering its
/// waiters after the step asks this before it waits). `false` for NULL.
///
/// # Safety
/// `exchange` is NULL or a live exchange.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_edge_exchange_followed_flight_landed(
    exchange: *const sitefile_edge_exchange,
) -> bool {
    // SAFETY: the caller's promise, forwarded.
    let exchange = unsafe { handle(exchange, "exchange") };
    exchange.is_ok_and(|e| e.exchange.followed_flight_landed())
}

/// The background refresh a `refresh` step announced, in `*out_refresh` (NULL once taken): an
/// exchange of its own, freed with `sitefile_edge_exchange_free`.
///
/// # Safety
/// `exchange` is NULL or a live exchange no other thread is using; `out_refresh` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_edge_exchange_take_refresh(
    exchange: *mut sitefile_edge_exchange,
    out_refresh: *mut *mut sitefile_edge_exchange,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_refresh, exchange) = unsafe {
            (
                out(out_refresh, "out_refresh")?,
                handle_mut(exchange, "exchange")?,
            )
        };
        if let Some(refresh) = exchange.exchange.take_refresh() {
            *out_refresh = Box::into_raw(Box::new(sitefile_edge_exchange { exchange: refresh }));
        }
        Ok(())
    })
}

/// Frees an exchange, done or not. NULL is a no-op.
///
/// # Safety
/// `exchange` is NULL or an exchange from `sitefile_edge_exchange_new` or
/// `sitefile_edge_exchange_take_refresh`, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_edge_exchange_free(exchange: *mut sitefile_edge_exchange) {
    if exchange.is_null() {
        return;
    }
    guard_void(|| {
        // SAFETY: the caller passes a pointer from Box::into_raw here, not freed before.
        drop(unsafe { Box::from_raw(exchange) });
    });
}
