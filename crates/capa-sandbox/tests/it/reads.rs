//! `hub.read` from inside code: the options the guest may send, and one read at a time per run
//! (each may load a kept result of many MB in the hub).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use capa_sandbox::{CallStop, Host, HostCall, ToolFailure};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::support::*;

/// Answers every read after a short wait with what it was asked, counting reads in flight.
#[derive(Default)]
struct ReadHost {
    in_flight: Arc<AtomicUsize>,
    max_in_flight: Arc<AtomicUsize>,
}

impl Host for ReadHost {
    fn call(&self, _call: HostCall) -> BoxFuture<'static, Result<Value, CallStop>> {
        async { Ok(Value::Null) }.boxed()
    }

    fn search(&self, _query: String) -> BoxFuture<'static, Result<String, ToolFailure>> {
        async { Ok(String::new()) }.boxed()
    }

    fn describe(&self, _targets: Vec<String>) -> BoxFuture<'static, Result<String, ToolFailure>> {
        async { Ok(String::new()) }.boxed()
    }

    fn read(
        &self,
        handle: String,
        options: String,
    ) -> BoxFuture<'static, Result<Value, ToolFailure>> {
        let in_flight = Arc::clone(&self.in_flight);
        let max = Arc::clone(&self.max_in_flight);
        async move {
            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            max.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            in_flight.fetch_sub(1, Ordering::SeqCst);
            let options: Value = serde_json::from_str(&options).unwrap_or(Value::Null);
            Ok(json!({ "handle": handle, "options": options }))
        }
        .boxed()
    }
}

#[tokio::test]
async fn reads_asked_at_once_run_one_at_a_time_and_answer_in_order() {
    let host = Arc::new(ReadHost::default());
    let out = capa_sandbox::run(
        input(
            r#"
            const all = await Promise.all([0, 1, 2, 3, 4].map(i => hub.read("h_" + i, { offset: i * 10 })));
            return all.map(r => [r.handle, r.options.offset]);
            "#,
        ),
        Arc::clone(&host) as Arc<dyn Host>,
    )
    .await;
    assert_eq!(
        value(&out),
        json!([
            ["h_0", 0],
            ["h_1", 10],
            ["h_2", 20],
            ["h_3", 30],
            ["h_4", 40]
        ])
    );
    assert_eq!(host.max_in_flight.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn misspelt_options_and_numbers_json_cannot_carry_are_refused_in_the_guest() {
    let host = Arc::new(ReadHost::default());
    let out = capa_sandbox::run(
        input(
            r#"
            const errors = [];
            for (const options of [{ offest: 5 }, { offset: NaN }, { length: Infinity }]) {
              try { await hub.read("h_1", options); errors.push("read") } catch (e) { errors.push(e.name + ": " + e.message) }
            }
            // Own keys only: what a prototype carries is not an option; undefined is left out.
            const inherited = Object.create({ offset: 7 });
            inherited.path = "a[0]";
            inherited.length = undefined;
            const ok = await hub.read("h_1", inherited);
            return [errors, ok.options];
            "#,
        ),
        Arc::clone(&host) as Arc<dyn Host>,
    )
    .await;
    let v = value(&out);
    let errors = v[0].as_array().cloned().unwrap_or_default();
    assert!(
        errors[0]
            .as_str()
            .is_some_and(|e| e.starts_with("TypeError: hub.read has no option `offest`")),
        "{v}"
    );
    for e in &errors[1..] {
        assert!(
            e.as_str()
                .is_some_and(|e| e.starts_with("TypeError") && e.contains("whole number")),
            "{v}"
        );
    }
    assert_eq!(v[1], json!({ "path": "a[0]" }));
}

#[tokio::test]
async fn a_long_handle_or_long_options_are_refused_before_they_wait_in_the_hub() {
    let host = Arc::new(ReadHost::default());
    let out = capa_sandbox::run(
        input(
            r#"
            const out = [];
            for (const [h, o] of [["h_" + "0".repeat(100), {}], ["h_1", { path: "a".repeat(9000) }]]) {
              try { await hub.read(h, o); out.push("read") } catch (e) { out.push(e.code + ": " + e.message) }
            }
            return out;
            "#,
        ),
        Arc::clone(&host) as Arc<dyn Host>,
    )
    .await;
    let v = value(&out);
    assert!(
        v[0].as_str()
            .is_some_and(|e| e.starts_with("invalid_arguments: hub.read: no handle is longer")),
        "{v}"
    );
    assert!(
        v[1].as_str()
            .is_some_and(|e| e.starts_with("invalid_arguments: hub.read: the options are longer")),
        "{v}"
    );
    assert_eq!(
        host.max_in_flight.load(Ordering::SeqCst),
        0,
        "nothing reached the host"
    );
}
