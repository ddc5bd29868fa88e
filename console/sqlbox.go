package console

import (
	"context"
	"net/http"
	"strings"
)

// The SQL box: one statement the user types, run as the role inside
// BEGIN READ ONLY, where SQL itself refuses anything that would change
// something (25006), then rolled back; with its EXPLAIN, and at most
// sqlMaxRows rows.

const sqlMaxRows = 500

// sqlPage is the SQL box's data (the page, or the result fragment).
type sqlPage struct {
	Query     string
	Ran       bool
	Res       *result
	Rows      [][]string
	Truncated bool
	Plan      string
	PlanError string
	Error     string
	Max       int
}

// sqlForm is the SQL box's page.
func (c *Console) sqlForm(w http.ResponseWriter, r *http.Request) {
	c.show(w, r, http.StatusOK, "sql", "SQL", &sqlPage{Max: sqlMaxRows})
}

// sqlRun runs the statement: BEGIN READ ONLY; SAVEPOINT; EXPLAIN it
// (its error, for a statement EXPLAIN does not take, only noted); ROLLBACK
// TO the savepoint; run it, keeping sqlMaxRows rows; ROLLBACK.
func (c *Console) sqlRun(w http.ResponseWriter, r *http.Request) {
	pg := &sqlPage{Query: r.PostFormValue("q"), Ran: true, Max: sqlMaxRows}
	if strings.TrimSpace(pg.Query) == "" {
		pg.Error = "type a statement"
		c.sqlShow(w, r, http.StatusBadRequest, pg)
		return
	}
	sc, err := c.open(r.Context(), sessionOf(r).user, r.RemoteAddr)
	if err != nil {
		c.fail(w, r, http.StatusForbidden, errText(err))
		return
	}
	defer sc.close()
	status, err := sqlInReadOnly(r.Context(), sc, pg)
	if err != nil {
		pg.Error = errText(err)
		if status = sqlStatus(err); status == 0 {
			status = http.StatusInternalServerError
		}
	}
	c.sqlShow(w, r, status, pg)
}

func sqlInReadOnly(ctx context.Context, sc *sqlConn, pg *sqlPage) (int, error) {
	for _, q := range []string{"BEGIN READ ONLY", "SAVEPOINT console_explain"} {
		if _, err := sc.query(ctx, q); err != nil {
			return 0, err
		}
	}
	defer func() { _, _ = sc.query(context.WithoutCancel(ctx), "ROLLBACK") }()
	if plan, err := sc.query(ctx, "EXPLAIN "+pg.Query); err != nil {
		pg.PlanError = errText(err)
		if _, err := sc.query(ctx, "ROLLBACK TO SAVEPOINT console_explain"); err != nil {
			return 0, err
		}
	} else {
		var lines []string
		for _, row := range plan.Rows {
			lines = append(lines, cell(row[0]))
		}
		pg.Plan = strings.Join(lines, "\n")
	}
	res, err := sc.queryMax(ctx, sqlMaxRows, pg.Query)
	if err != nil {
		return 0, err
	}
	pg.Res, pg.Truncated = res, !res.Done
	for _, row := range res.Rows {
		out := make([]string, len(row))
		for i, v := range row {
			out[i] = cell(v)
		}
		pg.Rows = append(pg.Rows, out)
	}
	return http.StatusOK, nil
}

func (c *Console) sqlShow(w http.ResponseWriter, r *http.Request, status int, pg *sqlPage) {
	if r.Header.Get("HX-Request") != "" {
		c.render(w, status, "sqlresult", pg)
		return
	}
	c.show(w, r, status, "sql", "SQL", pg)
}
