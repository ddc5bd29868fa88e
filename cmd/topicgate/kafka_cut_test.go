package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// cutProxy is a TCP proxy in front of a Kafka door that cuts every
// connection it carries, several times, while an idempotent producer
// produces through it. It reads Kafka's frames both ways so it can cut
// at the two places that matter to a producer: halfway through a
// Produce request (the door reads a torn frame and writes nothing of
// it) and after the door answered a Produce but before the client
// heard it (the door wrote the batch; the client sends it again).
//
// The server behind it advertises the proxy's address
// (--kafka-advertise): Metadata names broker 0 there, so clients keep
// going through the proxy (without it they would go around it after
// their first Metadata, to the address the door listens at).
type cutProxy struct {
	t      *testing.T
	ln     net.Listener
	target string
	// every: each every-th Produce request is torn, and each every-th
	// Produce answer dropped (offset by half), until maxCuts cuts.
	every, maxCuts int

	mu       sync.Mutex
	conns    map[net.Conn]bool
	requests int // Produce requests seen
	answers  int // Produce answers seen
	cuts     int
	dups     int // Produce partitions answered DUPLICATE_SEQUENCE_NUMBER
	wg       sync.WaitGroup
}

// startCutServer starts a test server whose Kafka door advertises a cut
// proxy in front of it, and the proxy.
func startCutServer(t *testing.T, every, maxCuts int) (*app, *cutProxy) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cfg := testConfig(t)
	cfg.KafkaListen, cfg.KafkaAdvertise = "127.0.0.1:0", ln.Addr().String()
	a := startServer(t, cfg)
	return a, startCutProxy(t, ln, a.KafkaAddr(), every, maxCuts)
}

func startCutProxy(t *testing.T, ln net.Listener, target string, every, maxCuts int) *cutProxy {
	t.Helper()
	px := &cutProxy{t: t, ln: ln, target: target, every: every, maxCuts: maxCuts, conns: map[net.Conn]bool{}}
	px.wg.Add(1)
	go px.accept()
	t.Cleanup(func() {
		ln.Close()
		px.cutAll(false)
		px.wg.Wait()
	})
	return px
}

func (px *cutProxy) addr() string { return px.ln.Addr().String() }

func (px *cutProxy) accept() {
	defer px.wg.Done()
	for {
		cc, err := px.ln.Accept()
		if err != nil {
			return
		}
		sc, err := net.Dial("tcp", px.target)
		if err != nil {
			cc.Close()
			continue
		}
		px.mu.Lock()
		px.conns[cc], px.conns[sc] = true, true
		px.mu.Unlock()
		// The requests in flight on this connection, by correlation id:
		// an answer is decoded with its request's key and version.
		inflight := &sync.Map{}
		px.wg.Add(2)
		go px.requestsOf(cc, sc, inflight)
		go px.answersTo(sc, cc, inflight)
	}
}

// cutAll closes every connection the proxy carries; counted says it is
// one of the cuts.
func (px *cutProxy) cutAll(counted bool) {
	px.mu.Lock()
	defer px.mu.Unlock()
	if counted {
		px.cuts++
	}
	for c := range px.conns {
		c.Close()
		delete(px.conns, c)
	}
}

// readKafkaFrame reads a size-prefixed frame.
func readKafkaFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > 200<<20 {
		return nil, fmt.Errorf("frame of %d bytes", n)
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

func writeKafkaFrame(w io.Writer, b []byte) error {
	out := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(b)), uint32(len(b)))
	_, err := w.Write(append(out, b...))
	return err
}

type inflightReq struct{ key, version int16 }

// requestsOf forwards the client's requests to the door, tearing each
// every-th Produce in two and cutting.
func (px *cutProxy) requestsOf(cc, sc net.Conn, inflight *sync.Map) {
	defer px.wg.Done()
	defer cc.Close()
	defer sc.Close()
	for {
		f, err := readKafkaFrame(cc)
		if err != nil || len(f) < 8 {
			return
		}
		key, version := int16(binary.BigEndian.Uint16(f)), int16(binary.BigEndian.Uint16(f[2:]))
		inflight.Store(int32(binary.BigEndian.Uint32(f[4:])), inflightReq{key, version})
		if key == 0 { // Produce
			px.mu.Lock()
			px.requests++
			tear := px.cuts < px.maxCuts && px.requests%px.every == 0
			px.mu.Unlock()
			if tear {
				// The size says the whole frame; half of it comes.
				out := binary.BigEndian.AppendUint32(nil, uint32(len(f)))
				_, _ = sc.Write(append(out, f[:len(f)/2]...))
				px.cutAll(true)
				return
			}
		}
		if writeKafkaFrame(sc, f) != nil {
			return
		}
	}
}

// answersTo forwards the door's answers to the client: the broker
// address rewritten to the proxy's, each every-th Produce answer (offset
// by half a period from the torn requests) dropped and every connection
// cut.
func (px *cutProxy) answersTo(sc, cc net.Conn, inflight *sync.Map) {
	defer px.wg.Done()
	defer cc.Close()
	defer sc.Close()
	for {
		f, err := readKafkaFrame(sc)
		if err != nil {
			return
		}
		corr := int32(binary.BigEndian.Uint32(f))
		v, ok := inflight.LoadAndDelete(corr)
		if !ok {
			px.t.Errorf("an answer to no request (correlation id %d)", corr)
			return
		}
		req := v.(inflightReq)
		f, resp, err := px.inspect(req, f)
		if err != nil {
			px.t.Errorf("%s v%d answer: %v", kmsg.NameForKey(req.key), req.version, err)
			return
		}
		if pr, ok := resp.(*kmsg.ProduceResponse); ok {
			px.mu.Lock()
			px.answers++
			for _, t := range pr.Topics {
				for _, p := range t.Partitions {
					if p.ErrorCode == kerr.DuplicateSequenceNumber.Code {
						px.dups++
					}
				}
			}
			drop := px.cuts < px.maxCuts && (px.answers+px.every/2)%px.every == 0
			px.mu.Unlock()
			if drop {
				px.cutAll(true)
				return
			}
		}
		if writeKafkaFrame(cc, f) != nil {
			return
		}
	}
}

// inspect decodes a Produce answer (the proxy counts its duplicates)
// and returns the frame to forward, unchanged.
func (px *cutProxy) inspect(req inflightReq, f []byte) ([]byte, kmsg.Response, error) {
	if req.key != 0 {
		return f, nil, nil
	}
	kreq := kmsg.RequestForKey(req.key)
	kreq.SetVersion(req.version)
	hdr := 4
	if kreq.IsFlexible() {
		// The response header's tagged fields: the door sends none.
		if len(f) < 5 || f[4] != 0 {
			return nil, nil, errors.New("a response header with tagged fields")
		}
		hdr = 5
	}
	resp := kreq.ResponseKind()
	if err := resp.ReadFrom(f[hdr:]); err != nil {
		return nil, nil, err
	}
	return f, resp, nil
}

func (px *cutProxy) counts() (cuts, dups int) {
	px.mu.Lock()
	defer px.mu.Unlock()
	return px.cuts, px.dups
}

// checkCutTopic: SQL reads each value of 0..n-1 exactly once, value i in
// partition i % parts, each partition's offsets contiguous from 0 and
// its values in the order they were produced.
func checkCutTopic(t *testing.T, a *app, topic string, parts, n int) {
	t.Helper()
	got := queryText(t, connect(t, a), `SELECT partition, "offset", convert_from(data, 'UTF8') FROM `+topic+` ORDER BY partition, "offset"`)
	want := make([]string, 0, n)
	for p := range parts {
		off := 0
		for i := p; i < n; i += parts {
			want = append(want, fmt.Sprintf("%d %d %d", p, off, i))
			off++
		}
	}
	require.Equal(t, len(want), len(got), "rows")
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("row %d is %q, want %q (a record lost, written twice or out of order)", i, got[i], want[i])
		}
	}
}

// TestKafkaIdempotentProducerCut: franz-go's idempotent producer (its
// defaults: idempotent, retrying without limit, several requests in
// flight; smaller batches and faster metadata refreshes) produces 20,000 records to 3 partitions through a proxy that
// cuts its connections eight times, half of them in the middle of a
// Produce request, half after the door stored a Produce but before its
// answer reached the client. The client reconnects and resends what it
// did not hear about with the same sequences; the door answers a resent
// batch it holds DUPLICATE_SEQUENCE_NUMBER. SQL then reads every value
// exactly once, offsets contiguous from 0 in each partition, and each
// partition's values in produce order.
func TestKafkaIdempotentProducerCut(t *testing.T) {
	const parts, n = 3, 20000
	a, px := startCutServer(t, 6, 8)
	exec(t, connect(t, a), fmt.Sprintf("CREATE TOPIC cut WITH (min_active_partitions = %d)", parts))
	// Batches of at most 8 KiB (a few hundred records): many Produce
	// requests, so the cuts fall among them rather than on one. A failed
	// Produce has franz-go refresh its metadata before it retries, and
	// refreshes are at least MetadataMinAge apart (5 s by default): a
	// shorter one keeps the test short.
	cl := kafkaClient(t, a, kgo.SeedBrokers(px.addr()), kgo.ProducerBatchMaxBytes(8<<10), kgo.MetadataMinAge(100*time.Millisecond))
	ctx := testCtx(t)
	var failed atomic.Pointer[error]
	for i := range n {
		cl.Produce(ctx, &kgo.Record{Topic: "cut", Partition: int32(i % parts), Value: []byte(strconv.Itoa(i))},
			func(r *kgo.Record, err error) {
				if err != nil {
					err = fmt.Errorf("record %s: %w", r.Value, err)
					failed.CompareAndSwap(nil, &err)
				}
			})
	}
	require.NoError(t, cl.Flush(ctx))
	if err := failed.Load(); err != nil {
		t.Fatal(*err)
	}
	cuts, dups := px.counts()
	t.Logf("%d cuts, %d partitions answered DUPLICATE_SEQUENCE_NUMBER", cuts, dups)
	require.Equal(t, 8, cuts)
	require.Positive(t, dups, "a batch whose answer was dropped is sent again")
	checkCutTopic(t, a, "cut", parts, n)
}

// TestKafkaIdempotentProducerCutConfluentPython: librdkafka's idempotent
// producer (testdata/kafka/confluent_cut_producer.py, Debian's
// python3-confluent-kafka) through the same proxy: 6,000 records in
// batches of 200, eight cuts; SQL reads each value once, in order, with
// contiguous offsets.
func TestKafkaIdempotentProducerCutConfluentPython(t *testing.T) {
	const parts, n = 3, 6000
	requireConfluent(t)
	a, px := startCutServer(t, 6, 8)
	exec(t, connect(t, a), fmt.Sprintf("CREATE TOPIC pycut WITH (min_active_partitions = %d)", parts))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := osexec.CommandContext(ctx, debianPython, "-E", "-s", "confluent_cut_producer.py")
	cmd.Dir = kafkaScenarioDir(t)
	cmd.Env = append(os.Environ(), "TOPICGATE_KAFKA="+px.addr(), "TOPICGATE_TOPIC=pycut",
		"TOPICGATE_RECORDS="+strconv.Itoa(n), "TOPICGATE_PARTITIONS="+strconv.Itoa(parts), "PYTHONDONTWRITEBYTECODE=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	o, err := cmd.Output()
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", o, stderr.String())
	require.Equal(t, fmt.Sprintf("delivered %d\n", n), string(o))
	cuts, dups := px.counts()
	t.Logf("%d cuts, %d partitions answered DUPLICATE_SEQUENCE_NUMBER", cuts, dups)
	require.Equal(t, 8, cuts)
	require.Positive(t, dups, "a batch whose answer was dropped is sent again")
	checkCutTopic(t, a, "pycut", parts, n)
}
