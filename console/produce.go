package console

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Producing a test message from a topic's page: the form's fields are
// the parameters of one INSERT, run as the logged-in role (INSERT
// privilege, as for psql). INSERT has no RETURNING on topics, so the
// message carries a producer_id (the form's, "console:<role>" unless
// changed): sys.producers then names its partition and seqno, and a
// SELECT bounded below by the partition's end before the INSERT finds
// its offset.

// produced is the produce fragment's data.
type produced struct {
	Partition, Offset, Seqno string
	Error                    string
}

// produce writes one message.
func (c *Console) produce(w http.ResponseWriter, r *http.Request) {
	topic, producer := r.PostFormValue("topic"), strings.TrimSpace(r.PostFormValue("producer_id"))
	if topic == "" || producer == "" {
		c.render(w, http.StatusBadRequest, "produced", &produced{Error: "give a topic and a producer_id"})
		return
	}
	cols, vals, args := []string{"data", "producer_id"}, []string{"convert_to($1, 'UTF8')", "$2"}, []any{r.PostFormValue("data"), producer}
	if k := r.PostFormValue("key"); k != "" {
		args = append(args, k)
		cols, vals = append(cols, "key"), append(vals, fmt.Sprintf("convert_to($%d, 'UTF8')", len(args)))
	}
	if g := strings.TrimSpace(r.PostFormValue("message_group_id")); g != "" {
		args = append(args, g)
		cols, vals = append(cols, "message_group_id"), append(vals, fmt.Sprintf("$%d", len(args)))
	}
	insert := `INSERT INTO ` + quoteIdent(topic) + ` (` + strings.Join(cols, ", ") + `) VALUES (` + strings.Join(vals, ", ") + `)`
	sc, err := c.open(r.Context(), sessionOf(r).user, r.RemoteAddr)
	if err != nil {
		c.render(w, http.StatusForbidden, "produced", &produced{Error: errText(err)})
		return
	}
	defer sc.close()
	pg, err := produceOne(r.Context(), sc, topic, producer, insert, args)
	if err != nil {
		status := http.StatusInternalServerError
		if code := sqlStatus(err); code != 0 {
			status = code
		}
		c.render(w, status, "produced", &produced{Error: errText(err)})
		return
	}
	c.render(w, http.StatusOK, "produced", pg)
}

func produceOne(ctx context.Context, sc *sqlConn, topic, producer, insert string, args []any) (*produced, error) {
	ends, err := sc.query(ctx, `SELECT partition, end_offset FROM sys.partitions WHERE topic = $1`, topic)
	if err != nil {
		return nil, err
	}
	before := map[int64]int64{}
	for _, row := range ends.Rows {
		before[row[0].(int64)] = row[1].(int64)
	}
	if _, err := sc.query(ctx, insert, args...); err != nil {
		return nil, err
	}
	pr, err := sc.query(ctx, `SELECT partition, max_seqno FROM sys.producers WHERE topic = $1 AND producer_id = $2`, topic, producer)
	if err != nil {
		return nil, err
	}
	if len(pr.Rows) != 1 {
		return &produced{Partition: "?", Offset: "?", Seqno: "?"}, nil
	}
	part, seq := pr.Rows[0][0].(int64), pr.Rows[0][1].(int64)
	pg := &produced{Partition: strconv.FormatInt(part, 10), Seqno: strconv.FormatInt(seq, 10), Offset: "?"}
	off, err := sc.query(ctx, `SELECT "offset" FROM `+quoteIdent(topic)+` WHERE partition = $1 AND "offset" >= $2 AND producer_id = $3 AND seqno = $4 LIMIT 1`,
		part, before[part], producer, seq)
	if err == nil && len(off.Rows) == 1 {
		pg.Offset = cell(off.Rows[0][0])
	}
	// Without SELECT on the topic the role may write but not read back:
	// the offset stays unknown.
	return pg, nil
}
