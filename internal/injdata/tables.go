package main

import (
	"fmt"
	"strings"
)

// Synthetic tables: query results and exports as tools print them
// (Markdown, CSV, TSV, psql), with free-text columns whose notes are
// ordinary business imperatives ("call back after 3pm", "forward to
// accounting"). WikiTableQuestions, BIPIA's table source, is not used
// beyond BIPIA's train contexts: its other tables may be BIPIA's test
// contexts.

const tableDocs = 1200

type tableSchema struct {
	cols []string
	row  func(r *rng, i int) []string
}

var (
	firstNames = []string{"Alice", "Bob", "Chen", "Dana", "Emeka", "Fatima", "Georg", "Hana", "Ivan", "Julia", "Kofi", "Lena", "Mateo", "Nora", "Omar", "Priya"}
	lastNames  = []string{"Smith", "Müller", "Okafor", "García", "Kim", "Novak", "Rossi", "Haddad", "Larsen", "Tanaka", "Dubois", "Kowalski"}
	cities     = []string{"Berlin", "Lagos", "Austin", "Osaka", "Lyon", "Porto", "Toronto", "Pune", "Krakow", "Nairobi", "Denver", "Leeds"}
	products   = []string{"USB-C cable 2m", "Standing desk", "Laptop stand", "Noise-cancelling headset", "27\" monitor", "Ergonomic chair", "Webcam 1080p", "Dock station", "Paper A4 (500)", "Toner cartridge"}
	notes      = []string{
		"", "", "", "call back after 3pm", "forward to accounting", "please check the invoice number", "ship to warehouse B",
		"customer asked to cancel", "send a reminder next week", "do not contact before Monday", "approved by J. Novak",
		"see ticket #4411", "replace the damaged unit", "ignore the duplicate entry above", "refund issued", "waiting for PO",
		"escalate if not paid by the 15th", "update the address on file",
	}
	statuses = []string{"open", "closed", "pending", "shipped", "delivered", "cancelled", "on hold"}
)

func person(r *rng) string { return pick(r, firstNames) + " " + pick(r, lastNames) }

func date(r *rng) string {
	return fmt.Sprintf("2024-%02d-%02d", 1+r.intn(12), 1+r.intn(28))
}

var tableSchemas = []tableSchema{
	{[]string{"order_id", "customer", "product", "qty", "total", "status", "note"}, func(r *rng, i int) []string {
		q := r.between(1, 20)
		return []string{fmt.Sprint(10400 + i*7 + r.intn(7)), person(r), pick(r, products), fmt.Sprint(q), fmt.Sprintf("%.2f", float64(q)*float64(r.between(5, 900))+0.99), pick(r, statuses), pick(r, notes)}
	}},
	{[]string{"employee", "department", "city", "start_date", "manager"}, func(r *rng, _ int) []string {
		return []string{person(r), pick(r, []string{"Sales", "Engineering", "Finance", "Support", "Legal", "HR"}), pick(r, cities), date(r), person(r)}
	}},
	{[]string{"region", "q1", "q2", "q3", "q4", "growth"}, func(r *rng, _ int) []string {
		return []string{pick(r, []string{"EMEA", "APAC", "North America", "LATAM", "DACH", "Nordics"}), fmt.Sprint(r.intn(900000)), fmt.Sprint(r.intn(900000)), fmt.Sprint(r.intn(900000)), fmt.Sprint(r.intn(900000)), fmt.Sprintf("%+.1f%%", float64(r.intn(400)-150)/10)}
	}},
	{[]string{"host", "cpu_pct", "mem_gb", "disk_pct", "uptime_days", "alerts"}, func(r *rng, _ int) []string {
		return []string{pick(r, logHosts), fmt.Sprint(r.intn(100)), fmt.Sprintf("%.1f", float64(r.intn(640))/10), fmt.Sprint(r.intn(100)), fmt.Sprint(r.intn(400)), fmt.Sprint(r.intn(4))}
	}},
	{[]string{"ticket", "subject", "requester", "priority", "assignee", "updated"}, func(r *rng, i int) []string {
		return []string{fmt.Sprintf("SUP-%d", 2000+i), pick(r, []string{"Cannot log in", "Invoice missing", "Please reset my password", "Export to CSV fails", "Add a new user to the team", "Refund request", "Change delivery address"}), person(r), pick(r, []string{"low", "normal", "high", "urgent"}), person(r), date(r)}
	}},
	{[]string{"country", "capital", "population_m", "area_km2", "currency"}, func(r *rng, _ int) []string {
		c := pick(r, [][]string{{"Germany", "Berlin", "EUR"}, {"Nigeria", "Abuja", "NGN"}, {"Japan", "Tokyo", "JPY"}, {"Brazil", "Brasília", "BRL"}, {"Canada", "Ottawa", "CAD"}, {"India", "New Delhi", "INR"}, {"Poland", "Warsaw", "PLN"}, {"Kenya", "Nairobi", "KES"}})
		return []string{c[0], c[1], fmt.Sprintf("%.1f", float64(r.intn(14000))/10), fmt.Sprint(r.intn(9000000)), c[2]}
	}},
	{[]string{"package", "version", "license", "vulnerabilities", "action"}, func(r *rng, _ int) []string {
		return []string{pick(r, []string{"lodash", "requests", "log4j-core", "express", "openssl", "golang.org/x/net", "jackson-databind"}), fmt.Sprintf("%d.%d.%d", r.intn(5), r.intn(30), r.intn(20)), pick(r, []string{"MIT", "Apache-2.0", "BSD-3-Clause"}), fmt.Sprint(r.intn(3)), pick(r, []string{"none", "upgrade to the latest patch", "pin the version", "review before the next release"})}
	}},
	{[]string{"date", "description", "debit", "credit", "balance"}, func(r *rng, _ int) []string {
		return []string{date(r), pick(r, []string{"Card payment – grocery", "Salary", "Rent transfer", "Refund – online shop", "ATM withdrawal", "Standing order: gym", "Transfer to savings"}), fmt.Sprintf("%.2f", float64(r.intn(200000))/100), "", fmt.Sprintf("%.2f", float64(r.intn(1000000))/100)}
	}},
}

func renderTable(r *rng, cols []string, rows [][]string) string {
	var sb strings.Builder
	switch r.intn(4) {
	case 0: // Markdown
		sb.WriteString("| " + strings.Join(cols, " | ") + " |\n|" + strings.Repeat(" --- |", len(cols)) + "\n")
		for _, row := range rows {
			sb.WriteString("| " + strings.Join(row, " | ") + " |\n")
		}
	case 1: // CSV
		sb.WriteString(strings.Join(cols, ",") + "\n")
		for _, row := range rows {
			q := make([]string, len(row))
			for i, c := range row {
				if strings.ContainsAny(c, ", \"") {
					c = "\"" + strings.ReplaceAll(c, "\"", "\"\"") + "\""
				}
				q[i] = c
			}
			sb.WriteString(strings.Join(q, ",") + "\n")
		}
	case 2: // TSV
		sb.WriteString(strings.Join(cols, "\t") + "\n")
		for _, row := range rows {
			sb.WriteString(strings.Join(row, "\t") + "\n")
		}
	default: // psql
		w := make([]int, len(cols))
		for i, c := range cols {
			w[i] = len([]rune(c))
		}
		for _, row := range rows {
			for i, c := range row {
				w[i] = max(w[i], len([]rune(c)))
			}
		}
		line := func(cells []string) {
			for i, c := range cells {
				if i > 0 {
					sb.WriteString(" | ")
				} else {
					sb.WriteString(" ")
				}
				sb.WriteString(c + strings.Repeat(" ", w[i]-len([]rune(c))))
			}
			sb.WriteString("\n")
		}
		line(cols)
		for i := range cols {
			if i > 0 {
				sb.WriteString("+")
			}
			sb.WriteString(strings.Repeat("-", w[i]+2))
		}
		sb.WriteString("\n")
		for _, row := range rows {
			line(row)
		}
		fmt.Fprintf(&sb, "(%d rows)\n", len(rows))
	}
	return sb.String()
}

// readSyntheticTables generates tableDocs tables.
func readSyntheticTables(_ tree, e env) ([]item, error) {
	var out []item
	for d := 0; d < tableDocs; d++ {
		r := newRNG(e.seed, "tables", fmt.Sprint(d))
		s := pick(r, tableSchemas)
		rows := make([][]string, r.between(2, 40))
		for i := range rows {
			rows[i] = s.row(r, i)
		}
		out = append(out, item{text: renderTable(r, s.cols, rows), group: fmt.Sprint(d), kind: "table"})
	}
	return out, nil
}
