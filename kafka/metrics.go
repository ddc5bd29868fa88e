package kafka

import (
	"encoding/binary"
	"io"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/internal/prom"
)

// maxKey bounds the API keys counted one by one; a request naming a key
// outside [0, maxKey) is counted as "unknown".
const maxKey = 128

// apiStats are one API key's counters since the server started.
type apiStats struct {
	requests atomic.Int64
	errors   atomic.Int64
	latency  prom.Histogram
}

// stats are the door's request counters, by API key: a few atomic adds
// per request, written in Prometheus text by WriteMetrics.
type stats struct {
	apis    [maxKey + 1]apiStats // [maxKey]: unknown keys
	conns   atomic.Int64         // open connections
	refused atomic.Int64         // requests that closed their connection
}

// requestKey is the API key of a request frame (its first two bytes, as
// readFrame returns it), or -1.
func requestKey(frame []byte) int16 {
	if len(frame) < 2 {
		return -1
	}
	return int16(binary.BigEndian.Uint16(frame))
}

// observe counts one request of key that took d: an error is either the
// connection closed on it (closed) or an answer that carries a non-zero
// error code anywhere.
func (st *stats) observe(key int16, d time.Duration, resp kmsg.Response, closed bool) {
	i := int(key)
	if i < 0 || i >= maxKey {
		i = maxKey
	}
	a := &st.apis[i]
	a.requests.Add(1)
	a.latency.Observe(d)
	if closed {
		st.refused.Add(1)
		a.errors.Add(1)
	} else if resp != nil && hasErrorCode(resp) {
		a.errors.Add(1)
	}
}

// hasErrorCode reports whether an answer carries a non-zero ErrorCode at
// any level. Produce and Fetch, the hot ones, are walked directly; the
// others by reflection over their fields (record bytes are skipped).
func hasErrorCode(resp kmsg.Response) bool {
	switch r := resp.(type) {
	case *kmsg.ProduceResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					return true
				}
			}
		}
		return false
	case *kmsg.FetchResponse:
		if r.ErrorCode != 0 {
			return true
		}
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					return true
				}
			}
		}
		return false
	}
	return walkErrorCode(reflect.ValueOf(resp))
}

// walkErrorCode looks for a non-zero int16 field named ErrorCode in v,
// its nested structs and their slices.
func walkErrorCode(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer:
		return !v.IsNil() && walkErrorCode(v.Elem())
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return false
		}
		for i := 0; i < v.Len(); i++ {
			if walkErrorCode(v.Index(i)) {
				return true
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if t.Field(i).Name == "ErrorCode" && f.Kind() == reflect.Int16 {
				if f.Int() != 0 {
					return true
				}
				continue
			}
			if k := f.Kind(); (k == reflect.Slice || k == reflect.Struct || k == reflect.Pointer) && walkErrorCode(f) {
				return true
			}
		}
	}
	return false
}

// WriteMetrics writes the door's figures in Prometheus text format: per
// API (those of Supported, and any other that was asked for) the
// requests, the requests that failed (an error code in the answer, or the
// connection closed on them) and their latency from the frame read to
// the answer built; the open connections.
func (s *Server) WriteMetrics(w io.Writer) {
	p := prom.NewWriter(w)
	defer p.Flush()
	st := &s.stats
	p.Single("topicgate_kafka_connections", "gauge", "Open Kafka protocol connections.", float64(st.conns.Load()))
	p.Single("topicgate_kafka_refused_requests_total", "counter", "Kafka requests that closed their connection unanswered (a bad frame, an API or version the door does not serve, an internal error).", float64(st.refused.Load()))
	keys := s.metricKeys()
	p.Family("topicgate_kafka_requests_total", "counter", "Kafka requests by API.")
	for _, k := range keys {
		p.Sample("topicgate_kafka_requests_total", float64(st.apis[k].requests.Load()), "api", apiName(k))
	}
	p.Family("topicgate_kafka_request_errors_total", "counter", "Kafka requests by API whose answer carried an error code, or that closed their connection.")
	for _, k := range keys {
		p.Sample("topicgate_kafka_request_errors_total", float64(st.apis[k].errors.Load()), "api", apiName(k))
	}
	const lat = "topicgate_kafka_request_duration_seconds"
	p.Family(lat, "histogram", "Kafka request latency by API, from the request read to its answer built (a Fetch's long poll included).")
	for _, k := range keys {
		st.apis[k].latency.Write(p, lat, "api", apiName(k))
	}
}

// metricKeys are the keys WriteMetrics lists: every supported one, then
// any other that was asked for.
func (s *Server) metricKeys() []int {
	seen := map[int]bool{}
	var keys []int
	for _, k := range Supported {
		if int(k.ApiKey) < maxKey && !seen[int(k.ApiKey)] {
			seen[int(k.ApiKey)] = true
			keys = append(keys, int(k.ApiKey))
		}
	}
	for k := range s.stats.apis {
		if !seen[k] && s.stats.apis[k].requests.Load() > 0 {
			keys = append(keys, k)
		}
	}
	return keys
}

// apiName is the label of key k.
func apiName(k int) string {
	if k >= maxKey {
		return "unknown"
	}
	if name := kmsg.NameForKey(int16(k)); name != "Unknown" && name != "" {
		return name
	}
	return "unknown"
}
