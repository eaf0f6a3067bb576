/**
 * The metrics plaudit records, with their Prometheus HELP text: the names the
 * dashboard and the alert rules read. Every name the code records has a line
 * here and a row in docs/operations.md (test/node/metrics-catalog.test.ts).
 */
export const METRIC_HELP: Readonly<Record<string, string>> = {
  plaudit_requests_total: "Requests answered, by route, method and status.",
  plaudit_request_duration_seconds: "Time to answer a request, by route and method.",
  plaudit_toggle_outcomes_total:
    "Like and unlike calls by outcome (liked, already_liked, unliked, not_liked, rate_limited); saves likewise.",
  plaudit_token_verifications_total:
    "Bearer tokens accepted, by how: signature (checked now) or cache (this isolate checked the same token within the last minute; its times are checked again).",
  plaudit_rate_limited_total: "Requests refused with 429, by route (by kind of limit: plaudit_limit_refusals_total).",
  plaudit_limit_refusals_total:
    "Requests refused with 429 by kind: user (the user's own limit), ip, device, reputation (a stricter tier selected by standing).",
  plaudit_errors_total: "Error responses by error code.",
  plaudit_cache_lookups_total:
    "Item count reads by result: a hit names the cache tier that answered; a miss went to the regional store (D1).",
  plaudit_object_calls_total: "Calls to Durable Objects (RPC or fetch), by caller (route, job or object) and object class.",
  plaudit_d1_queries_total: "D1 statements run, by caller (route or job).",
  plaudit_d1_batches_total: "D1 batch() calls that succeeded (each one transaction, so one commit), by caller and database.",
  plaudit_d1_rows_read_total: "Rows D1 read, from its result meta, by caller.",
  plaudit_d1_rows_written_total: "Rows D1 wrote, from its result meta, by caller.",
  plaudit_store_round_trips_total: "Requests a count read made to a store (store: d1 or central), by caller; a feed makes at most 2.",
  plaudit_reshard_rows_total:
    "Rows a reshard step went through, by phase (copy, switch: verified, cleanup: deleted) and outcome (visited, moved: the item changes database, repaired: copied again).",
  plaudit_reshard_phases_total: "Reshard phases entered (copy, switch, cleanup, done).",
  plaudit_count_layout_problems:
    "Disagreements between the configuration and the stored count layout at this isolate's last layout read (COUNT_DATABASES changed since the first reshard, a count database without its binding); 0 when they agree.",
  plaudit_store_reads_total: "Count reads that went to the stores, by caller and by how many store requests each took (round_trips).",
  plaudit_shard_splits_total: "Items that turned hot and began writing to their shards.",
  plaudit_shard_merges_total: "Hot items that cooled and went back to writing at their head.",
  plaudit_shard_growths_total: "Hot items whose N grew fourfold because their children neared their capacity.",
  plaudit_hot_item_shards: "Shard count of a hot item, per item; disappears when no longer reported.",
  plaudit_hot_item_writes_per_second: "Write rate of a hot item, per item; disappears when no longer reported.",
  plaudit_outbox_enqueued_total: "Changes written to an object's outbox, by object kind.",
  plaudit_outbox_delivered_total: "Outbox changes acknowledged by their receiver (a delivery acknowledges every change of the edge it overtook), by object kind.",
  plaudit_storage_commits_total: "Storage commits (transactions) made by Durable Objects, by object kind.",
  plaudit_storage_rows_written_total: "SQLite rows written by Durable Objects (the cursors' rowsWritten; billed per row), by object kind.",
  plaudit_storage_alarms_set_total: "setAlarm calls by Durable Objects (each billed as a row written), by object kind.",
  plaudit_storage_alarms_deleted_total:
    "deleteAlarm calls by Durable Objects (not billed), by object kind; one in an alarm's run takes the place of the runtime's own deletion of the fired alarm, and rides the commit of its turn when there is one.",
  plaudit_storage_alarms_run_total: "Alarms that fired in Durable Objects (each a billed request), by object kind.",
  plaudit_central_store_writes_total: "Conditional writes to the central store, by outcome (written, or stale: it already held something newer).",
  plaudit_central_store_calls_total:
    "Requests sent to the central store, by operation (Scan, Query, GetItem, BatchGetItem, UpdateItem, ...) and outcome (ok, refused: the store answered with an error such as a failed condition, failed: no answer).",
  plaudit_queue_messages_total: "Queue messages by queue and event (sent, consumed, retried, dead_lettered).",
  plaudit_aggregator_lag_seconds: "Age of the oldest change the aggregator has not yet written to the stores.",
  plaudit_live_messages_sent_total: "Count messages live hubs sent to their sockets (one per socket per tick with changes).",
  plaudit_live_publish_calls_total: "Calls from the aggregator to live hubs, each carrying one batch's changed items the hub watches.",
  plaudit_object_overloaded_total: "Calls to Durable Objects refused as overloaded, by object kind (never retried).",
  plaudit_circuit_breaker_open: "1 while an endpoint's circuit breaker is open (calls to it are not made), else 0; by dependency and endpoint.",
  plaudit_d1_database_bytes: "Size of a D1 database as its last write reported it, by database.",
  plaudit_pending_intents_total: "Toggles kept while the user's object was unreachable (kept), and how each ended: applied, superseded by a newer action, refused by a limit.",
  plaudit_pending_intent_wait_seconds:
    "Time from a kept toggle's request to its application by the drain: the rate of the drain is this histogram's count per second.",
  plaudit_reconciliation_drift_ratio: "Share of checked items whose stored counts drifted in the last reconciliation.",
  plaudit_reconciliation_relative_drift: "Largest |count - truth| / truth among the items the last reconciliation repaired.",
  plaudit_reconciliation_items_checked_total: "Items reconciliation compared with their objects (recent ones and the walk over every item).",
  plaudit_reconciliation_oldest_check_seconds: "Every item ever counted was checked within this many seconds (since the last finished pass over every item began).",
  plaudit_pass_items_skipped_total: "Items a reconciliation pass's step skipped because their check kept failing over its deliveries (left to the next pass and the random samples).",
  plaudit_pass_steps_dropped_total:
    "Pass steps dropped without running or sending a successor, by pass: a duplicate delivery of a step its range had already committed, or one that lost its commit to another delivery of the same step.",
  plaudit_pass_items_total: "Items (or users) a pass over every item visited, by pass (reconcile, rebuild_d1, rebuild_central) and range; counted when a step commits.",
  plaudit_pass_ranges: "Ranges of the running pass, by pass.",
  plaudit_pass_ranges_done: "Ranges of the running pass that are done, by pass.",
  plaudit_pass_target_items_per_second: "The pace the running reconciliation pass keeps to end in RECONCILE_FULL_PASS_HOURS (the index's size / the pass's seconds).",
  plaudit_import_edges_total: "Imported edges by outcome (applied, duplicate, superseded, barred).",
  plaudit_import_backpressure_total:
    "Import calls refused with 503 and a Retry-After so the importer slows down, by reason (queue_backlog, object_error).",
  plaudit_reconciliation_slice_items_total:
    "Items checked by reconciliation's queued slices, by reason (sample: the random sample; drift: around a drifted item) and outcome (ok, lag, repaired, failed).",
  plaudit_reconciliation_rechecks_total:
    "Rechecks of hot and large items between reconciliation runs, by outcome (ok, lag, repaired, failed).",
};
