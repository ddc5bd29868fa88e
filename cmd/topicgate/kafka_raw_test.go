package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"hash/crc32"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawKafka is a bare TCP connection to the Kafka door, for input no
// client library would send.
type rawKafka struct {
	t  *testing.T
	nc net.Conn
}

func dialKafka(t *testing.T, a *app) *rawKafka {
	t.Helper()
	nc, err := net.Dial("tcp", a.KafkaAddr())
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	// A bound on every read below, so a server that neither answers nor
	// closes fails the test instead of hanging it.
	require.NoError(t, nc.SetReadDeadline(time.Now().Add(30*time.Second)))
	return &rawKafka{t: t, nc: nc}
}

// send writes b as it is.
func (r *rawKafka) send(b []byte) {
	r.t.Helper()
	_, err := r.nc.Write(b)
	require.NoError(r.t, err)
}

// request frames req at version v with correlation id corr.
func request(req kmsg.Request, v int16, corr int32) []byte {
	req.SetVersion(v)
	b := make([]byte, 4, 256)
	b = binary.BigEndian.AppendUint16(b, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(v))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, 3)
	b = append(b, "raw"...)
	if req.IsFlexible() {
		b = append(b, 0)
	}
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// response reads one response frame: its correlation id and the rest.
func (r *rawKafka) response() (int32, []byte) {
	r.t.Helper()
	var size [4]byte
	_, err := io.ReadFull(r.nc, size[:])
	require.NoError(r.t, err)
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	_, err = io.ReadFull(r.nc, body)
	require.NoError(r.t, err)
	return int32(binary.BigEndian.Uint32(body)), body[4:]
}

// closed asserts the server closed the connection without answering:
// the read ends with EOF, or a reset when the server closed with bytes
// of ours unread; never a timeout.
func (r *rawKafka) closed() {
	r.t.Helper()
	n, err := r.nc.Read(make([]byte, 1))
	require.Equal(r.t, 0, n)
	if !errors.Is(err, syscall.ECONNRESET) {
		require.ErrorIs(r.t, err, io.EOF, "the server should close the connection")
	}
}

// oneRecordBatch is a record batch of one record with value v, its CRC
// right unless corrupt.
func oneRecordBatch(v string, corrupt bool) []byte {
	return recordBatch([]string{v}, -1, -1, -1, corrupt)
}

// recordBatch is a record batch of one record per value, of producer pid
// (-1: none) at epoch and first sequence seq, its CRC right unless
// corrupt.
func recordBatch(vals []string, pid int64, epoch int16, seq int32, corrupt bool) []byte {
	var raw []byte
	for i, v := range vals {
		rec := kmsg.Record{Value: []byte(v), OffsetDelta: int32(i)}
		rec.Length = int32(len(rec.AppendTo(nil)) - 1)
		raw = rec.AppendTo(raw)
	}
	b := kmsg.RecordBatch{Magic: 2, FirstTimestamp: time.Now().UnixMilli(), ProducerID: pid, ProducerEpoch: epoch,
		FirstSequence: seq, NumRecords: int32(len(vals)), LastOffsetDelta: int32(len(vals) - 1), Records: raw}
	b.MaxTimestamp = b.FirstTimestamp
	b.Length = int32(49 + len(raw))
	out := b.AppendTo(nil)
	crc := crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli))
	if corrupt {
		crc++
	}
	binary.BigEndian.PutUint32(out[17:], crc)
	return out
}

// produceRaw sends a Produce v8 of records to topic's partition 0 and
// returns the partition's answer.
func (r *rawKafka) produceRaw(topic string, records []byte, corr int32) kmsg.ProduceResponseTopicPartition {
	r.t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 10_000
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: topic, Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: records}}}}
	r.send(request(req, 8, corr))
	got, body := r.response()
	require.Equal(r.t, corr, got)
	resp := kmsg.ProduceResponse{Version: 8}
	require.NoError(r.t, resp.ReadFrom(body))
	return resp.Topics[0].Partitions[0]
}

// TestKafkaBadInput: a truncated frame, a length past the limit or below
// a header, an unknown API key and a version past the protocol's close
// the connection; an API or version outside Supported that kmsg can
// encode is answered with its error response (UNSUPPORTED_VERSION) and
// the connection goes on; an unsupported ApiVersions version is answered
// with UNSUPPORTED_VERSION and the list; a batch with a bad
// CRC, a truncated batch and a missing topic are refused per partition.
// Nothing is written, and the server goes on serving.
func TestKafkaBadInput(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC bad")
	t.Run("truncated frame", func(t *testing.T) {
		r := dialKafka(t, a)
		r.send(append(binary.BigEndian.AppendUint32(nil, 100), request(kmsg.NewPtrMetadataRequest(), 1, 1)[4:]...))
		require.NoError(t, r.nc.(*net.TCPConn).CloseWrite())
		r.closed()
	})
	t.Run("oversize length", func(t *testing.T) {
		r := dialKafka(t, a)
		r.send(binary.BigEndian.AppendUint32(nil, 200<<20))
		r.closed()
	})
	t.Run("negative length", func(t *testing.T) {
		r := dialKafka(t, a)
		r.send(binary.BigEndian.AppendUint32(nil, 0x80000000))
		r.closed()
	})
	t.Run("length below a header", func(t *testing.T) {
		r := dialKafka(t, a)
		r.send([]byte{0, 0, 0, 3, 0, 18, 0})
		r.closed()
	})
	t.Run("unknown API key", func(t *testing.T) {
		r := dialKafka(t, a)
		f := request(kmsg.NewPtrMetadataRequest(), 1, 1)
		binary.BigEndian.PutUint16(f[4:], 9999)
		r.send(f)
		r.closed()
	})
	t.Run("version past the protocol's", func(t *testing.T) {
		r := dialKafka(t, a)
		r.send(request(kmsg.NewPtrMetadataRequest(), 99, 1))
		r.closed()
	})
	t.Run("unsupported version", func(t *testing.T) {
		// Metadata v13 is past Supported: its error answer, with
		// UNSUPPORTED_VERSION in v13's top-level error code, and the
		// connection goes on.
		r := dialKafka(t, a)
		r.send(request(kmsg.NewPtrMetadataRequest(), 13, 7))
		corr, body := r.response()
		require.Equal(t, int32(7), corr)
		resp := kmsg.MetadataResponse{Version: 13}
		require.NoError(t, resp.ReadFrom(body[1:])) // past the response header's tags
		require.Equal(t, kerr.UnsupportedVersion.Code, resp.ErrorCode)
		r.send(request(kmsg.NewPtrMetadataRequest(), 12, 8))
		corr, body = r.response()
		require.Equal(t, int32(8), corr)
		next := kmsg.MetadataResponse{Version: 12}
		require.NoError(t, next.ReadFrom(body[1:]))
		require.Len(t, next.Brokers, 1)
	})
	t.Run("API not implemented", func(t *testing.T) {
		// ElectLeaders is not in Supported: its error answer (v1+ has a
		// top-level error code), and the connection goes on.
		r := dialKafka(t, a)
		r.send(request(kmsg.NewPtrElectLeadersRequest(), 2, 3))
		corr, body := r.response()
		require.Equal(t, int32(3), corr)
		resp := kmsg.ElectLeadersResponse{Version: 2}
		require.NoError(t, resp.ReadFrom(body[1:]))
		require.Equal(t, kerr.UnsupportedVersion.Code, resp.ErrorCode)
		require.Empty(t, resp.Topics)
		p := r.produceRaw("bad", oneRecordBatch("x", true), 4)
		require.Equal(t, kerr.CorruptMessage.Code, p.ErrorCode)
	})
	t.Run("ApiVersions version unknown", func(t *testing.T) {
		r := dialKafka(t, a)
		f := request(kmsg.NewPtrApiVersionsRequest(), 0, 42)
		binary.BigEndian.PutUint16(f[6:], 99)
		r.send(f)
		corr, body := r.response()
		require.Equal(t, int32(42), corr)
		resp := kmsg.ApiVersionsResponse{Version: 0}
		require.NoError(t, resp.ReadFrom(body))
		require.Equal(t, kerr.UnsupportedVersion.Code, resp.ErrorCode)
		require.NotEmpty(t, resp.ApiKeys)
	})
	t.Run("bad batches", func(t *testing.T) {
		r := dialKafka(t, a)
		p := r.produceRaw("bad", oneRecordBatch("x", true), 1)
		require.Equal(t, kerr.CorruptMessage.Code, p.ErrorCode)
		require.Contains(t, *p.ErrorMessage, "CRC")
		good := oneRecordBatch("x", false)
		p = r.produceRaw("bad", good[:len(good)-2], 2)
		require.Equal(t, kerr.InvalidRecord.Code, p.ErrorCode)
		p = r.produceRaw("bad", append(good, good...), 3)
		require.Equal(t, kerr.InvalidRecord.Code, p.ErrorCode)
		p = r.produceRaw("missing", good, 4)
		require.Equal(t, kerr.UnknownTopicOrPartition.Code, p.ErrorCode)
	})
	var n int64
	require.NoError(t, c.QueryRow(context.Background(), "SELECT count(*) FROM bad").Scan(&n))
	require.Equal(t, int64(0), n, "nothing written")
	r := dialKafka(t, a)
	p := r.produceRaw("bad", oneRecordBatch("ok", false), 5)
	require.Equal(t, []any{int16(0), int64(0)}, []any{p.ErrorCode, p.BaseOffset}, "the server goes on")
}

// TestKafkaListenLoopbackOnly: with --auth trust (no SASL required) the
// door refuses to listen beyond loopback, with words that say why.
func TestKafkaListenLoopbackOnly(t *testing.T) {
	cfg := testConfig(t)
	cfg.KafkaListen = "0.0.0.0:0"
	_, err := start(cfg)
	require.ErrorContains(t, err, "with --auth trust the Kafka door requires no SASL authentication")
}

// TestKafkaTLS: with --tls-cert and --tls-key the Kafka door is TLS
// (Kafka's SSL listener); a client trusting the certificate produces and
// consumes.
func TestKafkaTLS(t *testing.T) {
	certFile, keyFile, pool := writeTestCert(t)
	cfg := testConfig(t)
	cfg.KafkaListen, cfg.TLSCert, cfg.TLSKey = "127.0.0.1:0", certFile, keyFile
	a := startServer(t, cfg)
	exec(t, connect(t, a), "CREATE TOPIC sec")
	tlsOpt := kgo.DialTLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	cl := kafkaClient(t, a, tlsOpt)
	require.NoError(t, cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "sec", Value: []byte("secret")}).FirstErr())
	got := consumeN(t, a, "sec", 0, 0, 1, tlsOpt)
	require.Equal(t, "secret", string(got[0].Value))
}

// writeTestCert writes a self-signed certificate for 127.0.0.1 and its
// key, and returns their files and a pool that trusts it.
func writeTestCert(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestKafkaShutdownEndsLongPoll: a shutdown answers a Fetch that waits
// for messages at once (empty) and closes the connection; the server
// does not wait out the fetch's MaxWait.
func TestKafkaShutdownEndsLongPoll(t *testing.T) {
	waiting := make(chan struct{}, 1)
	a := startKafkaServer(t, func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	})
	exec(t, connect(t, a), "CREATE TOPIC quiet")
	r := dialKafka(t, a)
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 120_000, 1, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "quiet"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	r.send(request(req, 11, 9))
	select {
	case <-waiting:
	case <-time.After(30 * time.Second):
		t.Fatal("the fetch never waited")
	}
	done := make(chan error, 1)
	go func() { done <- a.Shutdown(time.Minute) }()
	corr, body := r.response()
	require.Equal(t, int32(9), corr)
	resp := kmsg.FetchResponse{Version: 11}
	require.NoError(t, resp.ReadFrom(body))
	require.Empty(t, resp.Topics[0].Partitions[0].RecordBatches)
	r.closed()
	require.NoError(t, <-done)
}
