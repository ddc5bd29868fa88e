package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// consumerSQL is a consumer's partitions as sys.consumers shows them to
// the role: nothing for a topic it may not see.
const consumerSQL = `SELECT partition, type, committed_offset, end_offset, lag_messages, lag_time::text AS lag_time,
	read_session, kafka_member FROM sys.consumers WHERE topic = $1 AND consumer = $2 ORDER BY partition`

// consumerPage is the consumer template's data.
type consumerPage struct {
	Topic, Name string
	Partitions  *result
	TopicURL    string
	LiveURL     string // the lag chart's stream
	// Lag is the lag in messages summed over the partitions.
	Lag int64
}

// consumer is a consumer's page: per partition its committed offset,
// lag and the read session holding it, and its lag over the last hour,
// live.
func (c *Console) consumer(w http.ResponseWriter, r *http.Request) {
	topic, name := r.URL.Query().Get("topic"), r.URL.Query().Get("name")
	c.withSQL(w, r, func(ctx context.Context, sc *sqlConn) error {
		res, err := sc.query(ctx, consumerSQL, topic, name)
		if err != nil {
			return err
		}
		if len(res.Rows) == 0 {
			c.fail(w, r, http.StatusNotFound, fmt.Sprintf("no consumer %q of topic %q that you may see", name, topic))
			return nil
		}
		p := &consumerPage{Topic: topic, Name: name, Partitions: res,
			TopicURL: "/topic?" + url.Values{"name": {topic}}.Encode(),
			LiveURL:  "/live?" + url.Values{"chart": {"lag"}, "topic": {topic}, "consumer": {name}}.Encode()}
		for _, row := range res.Rows {
			if n, ok := row[4].(int64); ok {
				p.Lag += n
			}
		}
		c.show(w, r, http.StatusOK, "consumer", name+" · "+topic, p)
		return nil
	})
}

// consumersListSQL lists the consumers of the topics the role may see, their
// lag summed over partitions.
const consumersListSQL = `SELECT topic, consumer, min(type) AS type, count(*) AS partitions,
	sum(lag_messages)::bigint AS lag, max(lag_time)::text AS lag_time
	FROM sys.consumers GROUP BY topic, consumer ORDER BY topic, consumer`

// consumers is the Consumers page: every consumer the role may see, each
// linking to its page.
func (c *Console) consumers(w http.ResponseWriter, r *http.Request) {
	c.withSQL(w, r, func(ctx context.Context, sc *sqlConn) error {
		res, err := sc.query(ctx, consumersListSQL)
		if err != nil {
			return err
		}
		c.show(w, r, http.StatusOK, "consumers", "Consumers", res)
		return nil
	})
}
