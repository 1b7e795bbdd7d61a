/**
 * The seeded fault campaign's pure parts: the schedule of faults drawn from a seed ({@link FaultSchedule}), the
 * history a workload records ({@link History}) and the checker that finds anomalies in it ({@link HistoryChecker}).
 * No broker and no client here: {@code compat-tests}' {@code FaultCampaign} drives real processes with them.
 */
package io.cairn.testkit.faults;
