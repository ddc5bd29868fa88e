package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaTransactionalJobKill9: a franz-go read-process-write job
// (GroupTransactSession: consume, produce, send the offsets to the
// transaction, commit) runs while its server is killed with SIGKILL three
// times, each at a moment the job is mid-transaction; the job restarts
// its client whenever a transaction ends in an error, as a real job
// restarts. Afterwards every input was answered exactly once: the
// outputs of transactions the server acknowledged, or stored before it
// died, survived; what it had not stored, nobody saw; nothing twice.
func TestKafkaTransactionalJobKill9(t *testing.T) {
	if onCluster() {
		t.Skip("a child server on a data directory: the embedded pass runs it")
	}
	s := newCrashServer(t)
	kaddr := crashFreePort(t)
	s.args = []string{"--data-dir", s.dataDir, "--kafka-listen", kaddr}
	s.start()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := s.connect(ctx)
	exec(t, c, "CREATE TOPIC jin WITH (min_active_partitions = 4)")
	exec(t, c, "CREATE TOPIC jout WITH (min_active_partitions = 4)")
	c.Close(ctx)
	const n = 4000
	prod, err := kgo.NewClient(kgo.SeedBrokers(kaddr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	var in []*kgo.Record
	for i := range n {
		in = append(in, &kgo.Record{Topic: "jin", Partition: int32(i % 4), Value: []byte(strconv.Itoa(i))})
	}
	require.NoError(t, prod.ProduceSync(ctx, in...).FirstErr())
	prod.Close()

	commits := make(chan struct{}, 1024)
	done := make(chan error, 1)
	var lives []string
	go func() { done <- runKafkaJob(ctx, kaddr, n, commits, &lives) }()
	for kill := range 3 {
		for range 4 + 3*kill { // a few transactions into each life
			select {
			case <-commits:
			case err := <-done:
				t.Fatalf("the job ended before kill %d: %v", kill+1, err)
			}
		}
		s.kill()
		s.start()
	}
	require.NoError(t, <-done)
	t.Logf("the job's lives ended by: %v", lives)
	require.GreaterOrEqual(t, len(lives), 2, "a kill ended at least one life of the job in an error")

	c = s.connect(ctx)
	defer c.Close(ctx)
	rows, err := c.Query(ctx, "SELECT convert_from(data, 'UTF8') FROM jout")
	require.NoError(t, err)
	seen := map[string]int{}
	for rows.Next() {
		var v string
		require.NoError(t, rows.Scan(&v))
		seen[v]++
	}
	require.NoError(t, rows.Err())
	var missing, twice []string
	for i := range n {
		switch v := "out-" + strconv.Itoa(i); seen[v] {
		case 0:
			missing = append(missing, v)
		case 1:
		default:
			twice = append(twice, v)
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing, "inputs never answered")
	require.Empty(t, twice, "inputs answered twice")
	require.Len(t, seen, n, "outputs that answer no input")
}

// runKafkaJob runs the read-process-write job until the group's committed
// offsets cover all n inputs of jin, telling commits of each transaction
// it committed. A transaction that ends in an error (the server died
// under it, or its outcome is not known) restarts the job's client: the
// new one fences the old epoch and resumes from the committed offsets.
func runKafkaJob(ctx context.Context, addr string, n int, commits chan<- struct{}, lives *[]string) error {
	adm, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer adm.Close()
	admin := kadm.NewClient(adm)
	committed := func() int64 {
		os, err := admin.FetchOffsets(ctx, "kjob")
		if err != nil {
			return -1
		}
		var sum int64
		os.Each(func(o kadm.OffsetResponse) { sum += o.At })
		return sum
	}
	for life := 0; ; life++ {
		if ctx.Err() != nil {
			return fmt.Errorf("the job did not finish: %d of %d inputs committed", committed(), n)
		}
		sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(addr), kgo.TransactionalID("kjob"),
			kgo.ConsumerGroup("kjob"), kgo.ConsumeTopics("jin"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.DefaultProduceTopic("jout"),
			kgo.SessionTimeout(6*time.Second), kgo.TransactionTimeout(20*time.Second), kgo.MaxBufferedRecords(2000),
			kgo.FetchMaxBytes(64<<10))
		if err != nil {
			return err
		}
		finished, err := jobLife(ctx, sess, int64(n), committed, commits)
		sess.Close()
		if finished {
			*lives = append(*lives, "done")
			return nil
		}
		*lives = append(*lives, err.Error()) // the next life resumes
	}
}

// jobLife is one life of the job's client: transactions until one ends in
// an error (false) or the inputs are all committed (true).
func jobLife(ctx context.Context, sess *kgo.GroupTransactSession, n int64, committed func() int64, commits chan<- struct{}) (bool, error) {
	for {
		if committed() == n {
			return true, nil
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := sess.PollRecords(pctx, 40)
		cancel()
		if fs.NumRecords() == 0 {
			if err := fs.Err(); err != nil && ctx.Err() != nil {
				return false, err
			}
			continue
		}
		if err := sess.Begin(); err != nil {
			return false, err
		}
		fs.EachRecord(func(r *kgo.Record) {
			sess.Produce(ctx, &kgo.Record{Key: r.Value, Value: append([]byte("out-"), r.Value...)}, nil)
		})
		ok, err := sess.End(ctx, kgo.TryCommit)
		if err != nil {
			return false, err
		}
		if ok {
			select {
			case commits <- struct{}{}:
			default:
			}
		}
	}
}
