package kafka

import (
	"crypto/rand"
	"encoding/binary"
	"net"
	"sort"
	"sync/atomic"
	"time"
)

// ConnView is one open connection of the door, as sys.sessions shows it
// (a copy, taken when Conns is called).
type ConnView struct {
	// ID numbers the connection among this server's: from a random
	// start below 2^23, as the PostgreSQL door numbers its sessions, so
	// that two gateways' connections rarely share one; below 2^31.
	ID int64
	// User is the role the connection acts as: the one it authenticated
	// as with SASL, else Config.User; "" before SASL authentication when
	// it is required, and for Config.User "" (the bootstrap superuser).
	User string
	// ClientID is the client id of its latest request that named one.
	ClientID string
	// Remote is the client's address, Since when it connected.
	Remote string
	Since  time.Time
	// Active: it is answering a request, API's ("Fetch"); otherwise API
	// is the last one it answered ("" before its first).
	Active bool
	API    string
}

// connInfo is what Conns reads of a live connection: its goroutine
// updates it as it goes (atomics), Conns reads it from others.
type connInfo struct {
	id     int64
	nc     net.Conn
	remote string
	since  time.Time
	user   atomic.Pointer[string]
	client atomic.Pointer[string]
	api    atomic.Int32 // the request key being answered or last answered, -1 none
	active atomic.Bool
}

// firstConnID is where a server's connection numbers start: random below
// 2^23, as the PostgreSQL door's process ids.
func firstConnID() int64 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return int64(binary.BigEndian.Uint32(b[:]) >> 9)
}

// track registers a connection's info under a fresh number; the returned
// function forgets it.
func (s *Server) track(nc net.Conn) (*connInfo, func()) {
	ci := &connInfo{nc: nc, remote: nc.RemoteAddr().String(), since: time.Now()}
	ci.api.Store(-1)
	s.mu.Lock()
	for {
		s.nextConn++
		if s.nextConn >= 1<<31 {
			s.nextConn = 1
		}
		if _, used := s.infos[s.nextConn]; !used {
			break
		}
	}
	ci.id = s.nextConn
	s.infos[ci.id] = ci
	s.mu.Unlock()
	return ci, func() {
		s.mu.Lock()
		delete(s.infos, ci.id)
		s.mu.Unlock()
	}
}

// Conns lists the open connections, by number.
func (s *Server) Conns() []ConnView {
	s.mu.Lock()
	out := make([]ConnView, 0, len(s.infos))
	for _, ci := range s.infos {
		cv := ConnView{ID: ci.id, Remote: ci.remote, Since: ci.since, Active: ci.active.Load()}
		if p := ci.user.Load(); p != nil {
			cv.User = *p
		}
		if p := ci.client.Load(); p != nil {
			cv.ClientID = *p
		}
		if k := ci.api.Load(); k >= 0 {
			cv.API = apiName(int(k))
		}
		out = append(out, cv)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// CloseConn closes the connection numbered id (pg_terminate_backend of
// it): its goroutine ends as if the client had left, which removes its
// group members only when they time out, as a client that vanished. It
// reports whether there was one.
func (s *Server) CloseConn(id int64) bool {
	s.mu.Lock()
	ci := s.infos[id]
	s.mu.Unlock()
	if ci == nil {
		return false
	}
	_ = ci.nc.Close()
	return true
}

// begin marks the connection answering a request of key.
func (ci *connInfo) begin(key int16) {
	k := int32(key)
	if k < 0 {
		k = maxKey // apiName's "unknown"
	}
	ci.api.Store(k)
	ci.active.Store(true)
}

// end marks the request answered; clientID is the client id it named.
func (ci *connInfo) end(clientID string) {
	ci.active.Store(false)
	if clientID != "" {
		if p := ci.client.Load(); p == nil || *p != clientID {
			ci.client.Store(&clientID)
		}
	}
}
