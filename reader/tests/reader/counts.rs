// SPDX-License-Identifier: GPL-2.0-only
//! The table of `reader -c` and the JSON summary on the golden scenario:
//! exact expected output, and the table's rows agreeing with the calls
//! and the summary's headline.

use antinomie_reader::call::{Call, CallState};
use antinomie_reader::decode::PmuTypes;
use antinomie_reader::output::Format;
use antinomie_reader::pipeline::{Counts, Outcome};

use crate::support::{self, calls_of, scenario_images, show_images};

/// The scenario's table (`tests/data/synthetic/counts.txt`, which the
/// CLI's test reads too): every whole call on the row of its result, the
/// unfinished and entry-less ones on rows of their state.
fn table() -> String {
    std::fs::read_to_string(support::data_dir().join("synthetic/counts.txt")).unwrap()
}

#[test]
fn the_scenario_counted_by_outcome() {
    let calls = calls_of(&scenario_images());
    let mut counts = Counts::default();
    for call in &calls {
        counts.add(call);
    }
    assert_eq!(counts.to_text(), table());

    // The rows agree with the calls themselves.
    let (_, summary) = show_images(&scenario_images(), Format::Text, &PmuTypes::none());
    assert_eq!(counts.total().calls, summary.calls());
    for (outcome, row) in counts.rows() {
        let on_row = calls.iter().filter(|c| Outcome::of(c) == outcome);
        assert_eq!(on_row.clone().count() as u64, row.calls, "{outcome:?}");
        let ns: u64 = on_row.filter_map(Call::duration_ns).sum();
        assert_eq!(ns, row.total_ns, "{outcome:?}");
    }
    let unfinished = counts
        .rows()
        .into_iter()
        .find(|(o, _)| *o == Outcome::Partial(CallState::Unfinished))
        .unwrap()
        .1;
    assert_eq!(unfinished.calls, summary.unfinished);
    assert_eq!(unfinished.timed, 0, "an unfinished call has no time");
}

/// The scenario's summary as `--summary json` prints it.
const JSON: &str = r#"{"calls":19,"complete":14,"unfinished":2,"unfinished_maybe_lost":1,"evicted":0,"entry_lost":1,"entry_missing":1,"entry_gone":0,"entry_read_earlier":1,"filtered_out":0,"late":0,"records":{"produced":37,"consumed":33,"lost":4,"lost_reported":4,"not_consumed":0,"lost_exact":true,"final_counters_missing":[]},"cpus":[{"cpu":0,"produced":18,"consumed":18,"entries":9,"exits":9,"lost":{"ring_full":2,"bad_consumer":0,"ring_broken":0},"lost_reported":{"ring_full":2,"bad_consumer":0,"ring_broken":0},"lost_records":2,"skipped":0,"start_pos":0,"joined":false,"check":"ok"},{"cpu":1,"produced":15,"consumed":15,"entries":7,"exits":8,"lost":{"ring_full":2,"bad_consumer":0,"ring_broken":0},"lost_reported":{"ring_full":2,"bad_consumer":0,"ring_broken":0},"lost_records":1,"skipped":0,"start_pos":48128,"joined":false,"check":"unknown"}],"lossless":null,"broken_pipe":false}
"#;

#[test]
fn the_scenario_summary_as_json() {
    let (_, summary) = show_images(&scenario_images(), Format::Text, &PmuTypes::none());
    let json = summary.to_json();
    assert_eq!(json, JSON);
    // The same numbers as the text's headline.
    let headline = summary.to_text().lines().next().unwrap().to_owned();
    assert!(
        headline.starts_with("summary: 19 calls (14 complete, 2 unfinished")
            && headline.contains("37 records produced = 33 consumed + 4 lost"),
        "{headline}"
    );
}

#[test]
fn json_summary_without_final_counters_says_the_loss_is_a_lower_bound() {
    let (_, mut summary) = show_images(&scenario_images(), Format::Text, &PmuTypes::none());
    summary.cpus.get_mut(&1).unwrap().counters = None;
    let v: serde_json::Value = serde_json::from_str(&summary.to_json()).unwrap();
    let records = &v["records"];
    assert_eq!(records["lost_exact"], false);
    assert_eq!(records["final_counters_missing"], serde_json::json!([1]));
    assert!(records["produced"].is_null() && records["not_consumed"].is_null());
    // Cpu 1's LOST records still count.
    assert_eq!(records["lost"], 4);
    assert!(v["cpus"][1]["produced"].is_null() && v["cpus"][1]["lost"].is_null());
    assert_eq!(v["cpus"][1]["check"], "unknown");
}
