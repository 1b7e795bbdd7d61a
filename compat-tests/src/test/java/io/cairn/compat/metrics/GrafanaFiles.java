package io.cairn.compat.metrics;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the PromQL of {@code grafana/}: every target expression of the dashboard's panels (rows included) and every
 * {@code expr} of the alert rule file, with the dashboard variables replaced as Grafana would for one job and all
 * instances. Stateless.
 */
final class GrafanaFiles {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern EXPR = Pattern.compile("^\\s+expr:\\s*(.+)$", Pattern.MULTILINE);

    private GrafanaFiles() {
    }

    /** Every panel target's expression, variables substituted. */
    static List<String> panelQueries(Path dashboard) throws IOException {
        List<String> queries = new ArrayList<>();
        collect(JSON.readTree(dashboard.toFile()).path("panels"), queries);
        return queries;
    }

    private static void collect(JsonNode panels, List<String> queries) {
        for (JsonNode panel : panels) {
            collect(panel.path("panels"), queries);
            for (JsonNode target : panel.path("targets")) {
                queries.add(substitute(target.path("expr").asText()));
            }
        }
    }

    /** One panel of the dashboard: its title, its unit and its targets (expressions substituted). */
    record Panel(String title, String unit, List<Target> targets) {
    }

    /** One query of a panel and its legend template ({@code {{label}}} placeholders). */
    record Target(String expr, String legendFormat) {
    }

    /** Every panel with targets, in dashboard order. */
    static List<Panel> panels(Path dashboard) throws IOException {
        List<Panel> panels = new ArrayList<>();
        collectPanels(JSON.readTree(dashboard.toFile()).path("panels"), panels);
        return panels;
    }

    private static void collectPanels(JsonNode nodes, List<Panel> panels) {
        for (JsonNode panel : nodes) {
            collectPanels(panel.path("panels"), panels);
            List<Target> targets = new ArrayList<>();
            for (JsonNode target : panel.path("targets")) {
                targets.add(new Target(substitute(target.path("expr").asText()),
                        target.path("legendFormat").asText()));
            }
            if (!targets.isEmpty()) {
                panels.add(new Panel(panel.path("title").asText(),
                        panel.path("fieldConfig").path("defaults").path("unit").asText(), targets));
            }
        }
    }

    /** The dashboard variables as Grafana fills them for job {@code cairn}, every instance, a 30 s rate window. */
    static String substitute(String expr) {
        return expr.replace("$job", PrometheusProcess.JOB).replace("$instance", ".*")
                .replace("$__rate_interval", "30s");
    }

    /** Every alert rule's expression (one line each). */
    static List<String> ruleExpressions(Path rules) throws IOException {
        List<String> expressions = new ArrayList<>();
        Matcher matcher = EXPR.matcher(Files.readString(rules));
        while (matcher.find()) {
            expressions.add(matcher.group(1).strip());
        }
        return expressions;
    }
}
