package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/authz"
)

// conn is one client connection; it belongs to its goroutine.
type conn struct {
	s  *Server
	nc net.Conn
	// id is who the connection acts as (nil when the server has no
	// Authority, or before SASL authentication when it is required);
	// release ends its session.
	id      *authz.Identity
	release func()
	// authed: a SASL exchange succeeded; sasl is the exchange under
	// way; closeAfter closes the connection once the answer is written
	// (a failed authentication).
	authed     bool
	sasl       *saslState
	closeAfter bool
	// host and port are the address the client reached, which Metadata
	// and FindCoordinator name as broker 0's: the client comes back to
	// the gateway it found.
	host string
	port int32
	// clientID is the client id of the request being answered.
	clientID string
	// info is what sys.sessions shows of the connection (connview.go).
	info *connInfo
	in   []byte // the frame being answered
	out  []byte // the answer being written
}

// serveConn runs one connection until its client leaves, it sends what
// cannot be answered, or the server closes.
func (s *Server) serveConn(nc net.Conn) {
	defer nc.Close()
	s.stats.conns.Add(1)
	defer s.stats.conns.Add(-1)
	info, untrack := s.track(nc)
	defer untrack()
	c := &conn{s: s, nc: nc, info: info}
	c.host, c.port = brokerAddr(nc.LocalAddr())
	if s.cfg.Advertise != "" {
		c.host, c.port = brokerAddr(advertised(s.cfg.Advertise))
	}
	defer func() {
		if c.release != nil {
			c.release()
		}
	}()
	if s.cfg.Auth != nil && !s.cfg.RequireSASL {
		id, release, err := s.cfg.Auth.Admit(s.cfg.User)
		if err != nil {
			s.log.Warn("kafka: connection refused", "remote", nc.RemoteAddr(), "err", err)
			return
		}
		c.setIdentity(id, release)
	}
	for {
		if c.sasl != nil && c.sasl.raw {
			if !c.serveRaw() {
				return
			}
			continue
		}
		var err error
		if c.in, err = readFrame(nc, c.in, s.cfg.MaxFrameBytes); err != nil {
			if !errors.Is(err, io.EOF) {
				s.log.Debug("kafka: connection closed", "remote", nc.RemoteAddr(), "err", err)
			}
			return
		}
		start, key := time.Now(), requestKey(c.in)
		c.info.begin(key)
		resp, err := c.answer()
		c.info.end(c.clientID)
		s.stats.observe(key, time.Since(start), resp.kresp, err != nil)
		if err != nil {
			s.log.Debug("kafka: closing connection", "remote", nc.RemoteAddr(), "err", err)
			return
		}
		if resp.kresp == nil {
			continue // acks=0: no answer
		}
		c.out = appendResponse(c.out[:0], resp.corr, resp.kresp)
		if _, err := nc.Write(c.out); err != nil || c.closeAfter {
			return
		}
		if cap(c.out) > 1<<20 {
			c.out = nil // do not keep a large fetch's buffer for an idle connection
		}
		if cap(c.in) > 1<<20 {
			c.in = nil // nor a large produce's frame
		}
	}
}

// reply is the answer to one request: kresp nil means none (acks=0).
type reply struct {
	corr  int32
	kresp kmsg.Response
}

// answer decodes the frame in c.in and answers it. An error closes the
// connection: a request that does not decode, an API or version outside
// Supported that has no error answer (unsupportedAnswer), a handler that
// panicked.
func (c *conn) answer() (r reply, err error) {
	h, req, err := decodeRequest(c.in)
	r.corr = h.corr
	var ue *unsupportedError
	if errors.As(err, &ue) && h.key == apiVersionsKey {
		r.kresp = unsupportedApiVersions()
		return r, nil
	}
	if errors.As(err, &ue) {
		// Another API outside Supported: its error answer where kmsg can
		// encode one (admin_unsupported.go), else the connection closes.
		if r.kresp = unsupportedAnswer(h.key, h.version); r.kresp != nil {
			return r, nil
		}
	}
	if err != nil {
		return r, err
	}
	if c.needsAuth() && !saslAPI(h.key) {
		return r, fmt.Errorf("%s before SASL authentication", kmsg.NameForKey(h.key))
	}
	defer func() {
		if p := recover(); p != nil {
			c.s.log.Error("kafka: panic answering a request", "api", kmsg.NameForKey(h.key), "version", h.version,
				"client", h.clientID, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("internal error answering %s: %v", kmsg.NameForKey(h.key), p)
		}
	}()
	c.clientID = h.clientID
	r.kresp = c.handle(c.s.ctx, req)
	return r, nil
}

// handle answers one decoded request of a supported API and version.
func (c *conn) handle(ctx context.Context, req kmsg.Request) kmsg.Response {
	switch req := req.(type) {
	case *kmsg.ApiVersionsRequest:
		return apiVersions(req)
	case *kmsg.MetadataRequest:
		return c.metadata(ctx, req)
	case *kmsg.ProduceRequest:
		return c.produce(ctx, req)
	case *kmsg.FetchRequest:
		return c.fetch(ctx, req)
	case *kmsg.ListOffsetsRequest:
		return c.listOffsets(ctx, req)
	case *kmsg.FindCoordinatorRequest:
		return c.findCoordinator(req)
	case *kmsg.InitProducerIDRequest:
		return c.initProducerID(ctx, req)
	case *kmsg.AddPartitionsToTxnRequest:
		return c.addPartitionsToTxn(ctx, req)
	case *kmsg.AddOffsetsToTxnRequest:
		return c.addOffsetsToTxn(req)
	case *kmsg.TxnOffsetCommitRequest:
		return c.txnOffsetCommit(ctx, req)
	case *kmsg.EndTxnRequest:
		return c.endTxn(ctx, req)
	case *kmsg.SASLHandshakeRequest:
		return c.saslHandshake(req)
	case *kmsg.SASLAuthenticateRequest:
		return c.saslAuthenticate(req)
	}
	return c.handleGroup(ctx, req)
}

// handleGroup answers the group APIs.
func (c *conn) handleGroup(ctx context.Context, req kmsg.Request) kmsg.Response {
	switch req := req.(type) {
	case *kmsg.JoinGroupRequest:
		return c.joinGroup(ctx, req, c.clientID)
	case *kmsg.SyncGroupRequest:
		return c.syncGroup(ctx, req)
	case *kmsg.HeartbeatRequest:
		return c.heartbeat(ctx, req)
	case *kmsg.LeaveGroupRequest:
		return c.leaveGroup(ctx, req)
	case *kmsg.OffsetCommitRequest:
		return c.offsetCommit(ctx, req)
	case *kmsg.OffsetFetchRequest:
		return c.offsetFetch(ctx, req)
	case *kmsg.DescribeGroupsRequest:
		return c.describeGroups(ctx, req)
	case *kmsg.ListGroupsRequest:
		return c.listGroups(ctx, req)
	case *kmsg.DeleteGroupsRequest:
		return c.deleteGroups(ctx, req)
	case *kmsg.OffsetDeleteRequest:
		return c.offsetDelete(ctx, req)
	}
	if resp := c.handleAdmin(ctx, req); resp != nil {
		return resp
	}
	// decodeRequest lets through only keys of Supported, each handled
	// above or by handleAdmin.
	panic(fmt.Sprintf("no handler for %s", kmsg.NameForKey(req.Key())))
}

// advertised is Config.Advertise as a net.Addr.
type advertised string

func (a advertised) Network() string { return "tcp" }
func (a advertised) String() string  { return string(a) }

// brokerAddr splits the address a client reached (or the advertised one)
// into the host and port the door names as broker 0's.
func brokerAddr(a net.Addr) (string, int32) {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String(), 0
	}
	p, _ := strconv.Atoi(port)
	return host, int32(p)
}
