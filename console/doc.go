// Package console is topicgate's web console: server-rendered HTML
// (html/template) with htmx 2 for partial updates, mounted at / of the
// `serve --http` endpoint beside /metrics, /healthz and /readyz.
//
// It owns the console's HTTP side: the login form, the session cookie, the
// CSRF tokens, the pages (Topics, a topic's partitions, consumers and
// shared consumers' queues, producing a test message, the message
// browser, Sessions, the SQL box, a consumer's page, the Cluster page and
// their live charts) and their embedded assets (assets/: htmx.min.js as
// npm's htmx.org 2.x ships it, htmx-ext-sse.min.js (htmx-ext-sse 2.2.4:
// htmx 2's bundled sse.js is the old extension and does not work) and
// uPlot.iife.min.js with uPlot.min.css (uPlot 1.6.32), each with its
// license; charts.js, hand-written, wires uPlot to the SSE events; the
// stylesheet. No JavaScript build, nothing downloaded at run time).
//
// Files: console.go (the handler, routes, authentication wrapper),
// auth.go (cookies, CSRF), query.go (the in-process SQL sessions),
// pages.go (rendering, Topics, a topic's page), browse.go (the message
// browser), export.go (its export), queue.go (queues and their actions),
// produce.go, sessions.go, sqlbox.go, consumer.go (a consumer's page),
// cluster.go (the Cluster page), samples.go (the live charts' sampler and
// its rings), live.go (GET /live, the charts' server-sent events);
// templates/ one file per page.
//
// Invariants:
//   - Every figure a page shows (but the live charts': below) comes from
//     plain SQL run in an in-process session of the executor
//     (Sessions.NewSession, the same wire.Handler the PostgreSQL port
//     uses) as the logged-in role: the same parser, planner and privilege
//     checks as psql. A topic the role may not see in sys.topics is not in
//     the console either. The package imports no store backend (only
//     topicstore's interfaces, for the sampler) and the wire package knows
//     nothing of it.
//   - A login is checked as a PostgreSQL password login: the role's stored
//     verifier (SCRAM or md5; none or past VALID UNTIL fails), then the
//     session's login checks (LOGIN, CONNECTION LIMIT). With --auth trust
//     the form asks for a role name only, as the PostgreSQL port does.
//   - The session is a cookie signed with HMAC-SHA256 under a per-process
//     random key (a restart logs everyone out): role, expiry and a random
//     nonce; HttpOnly, SameSite=Strict, Secure over TLS. Logging out
//     refuses the cookie until its expiry.
//   - Every request that may change something (any method but GET and
//     HEAD) carries the session's CSRF token, an HMAC of its nonce (form
//     field csrf or header X-CSRF-Token); the login form has one of its
//     own, tied to a nonce cookie set when the form was shown. GET
//     requests change nothing.
//   - The message browser and its export read with stateless SELECTs
//     bounded by partition and offset: they never name a consumer, so
//     browsing creates no consumer and moves no position. Filter values
//     are bind parameters; the free-form WHERE expression filters a
//     subquery already so bounded, as one statement inside BEGIN READ
//     ONLY as the role (SQL, not the text, decides what it may do). A
//     filtered page scans at most its scan window of offsets; an export
//     covers at most maxExport offsets and is streamed a chunk at a time.
//   - A shared consumer's message is acted on (ack, release, reject) only
//     by the session holding it, as in SQL: each login has at most one
//     queue session kept open across requests (its desk, queue.go), which
//     takes messages one at a time and runs the actions on them; it
//     closes when its locks expire, when it holds nothing more, or at
//     logout, and what it held goes back to the queue. An action on a
//     message the desk does not hold runs the same statement, which acts
//     on nothing: 409 with the statement's NOTICE.
//   - A test message is one INSERT whose parameters are the form's fields
//     (produce.go); it always names a producer_id, so that sys.producers
//     says where it went (INSERT has no RETURNING on topics).
//   - The SQL box (sqlbox.go) runs one statement inside BEGIN READ ONLY,
//     then rolls back: a write is refused by SQL (25006), never by
//     looking at the text; at most sqlMaxRows rows are kept.
//   - Cancel and terminate (the Sessions page) are SELECT
//     pg_cancel_backend($1) / pg_terminate_backend($1): SQL decides who
//     may; the page shows the buttons to superusers only.
//   - Plain HTTP is served on loopback only (the password and the cookie
//     would cross the network in clear); elsewhere every request gets 403.
//   - Bad input (an offset that is not a number, a partition the topic
//     lacks) is answered with a message in the page and a 4xx status,
//     before the topic is read.
//   - The live charts' figures are the one exception to the first
//     invariant: a sampler (samples.go) reads them from the store as
//     /metrics does (Config.Figures: the catalog's end offsets and written
//     bytes, consumers' positions; no SQL, so no session and no audit
//     line every few seconds) every SampleInterval (5 s) while a chart
//     is open and once a minute otherwise, from the console's first
//     request on (a server whose console no one opened samples nothing). It keeps an hour in fixed-size rings: one
//     timestamp ring and one float32 ring per series (3 per topic:
//     messages/s and bytes/s written, messages/s consumed; 1 per
//     consumer: its lag in messages), 720 slots each, at most maxSeries
//     (1000) series, about 2.9 MB at the cap; series of topics and
//     consumers gone are dropped at the next sample.
//   - GET /live streams only series of topics the logged-in role sees:
//     which is found by SQL as that role (sys.topics for throughput,
//     sys.consumers for a consumer's lag: 404 when it shows nothing),
//     when the stream opens and again every minute, with the cookie
//     checked again (an expired or logged-out login ends the stream).
//   - Console sessions have process ids from 2^30 up (nextPID), apart from
//     the PostgreSQL port's and the Kafka door's; with --audit-log each
//     login is an AUTH line (Config.OnLogin) and each statement is
//     audited as any session's.
package console
