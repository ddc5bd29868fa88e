package main

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The headless browser of the console tests (console_test.go).

// chromium is the browser the console tests drive: Debian's chromium,
// which .ci/run installs.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := osexec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium is not installed: .ci/run installs Debian's chromium (apt-get install chromium)")
	return ""
}

// browser is a headless chromium for one test; steps that fail write a
// screenshot and the page's HTML to a directory the log names.
type browser struct {
	t   *testing.T
	ctx context.Context
	n   int
}

func newBrowser(t *testing.T) *browser {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1280, 900))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA() })
	// The first Run starts the browser, on a context without a deadline
	// (the browser lives as long as it).
	require.NoError(t, chromedp.Do(ctx), "starting chromium")
	return &browser{t: t, ctx: ctx}
}

// stepTimeout bounds one step of a browser test.
const stepTimeout = 30 * time.Second

// run runs one step's actions; on failure it saves a screenshot and the
// HTML of the page and fails the test.
func (b *browser) run(name string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	sctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	b.check(name, chromedp.Do(sctx, actions...))
}

// check fails the test for a step's error, with a screenshot.
func (b *browser) check(name string, err error) {
	b.t.Helper()
	b.n++
	if err == nil {
		return
	}
	if dir, derr := os.MkdirTemp("", "topicgate-console-"); derr == nil {
		base := filepath.Join(dir, fmt.Sprintf("%02d-%s", b.n, name))
		shot, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		if png, err := chromedp.Run(shot, chromedp.FullScreenshot(100)); err == nil {
			_ = os.WriteFile(base+".png", png, 0o644)
		}
		if html, err := chromedp.Run(shot, chromedp.OuterHTML(chromedp.CSS("html"))); err == nil {
			loc, _ := chromedp.Run(shot, chromedp.Location())
			_ = os.WriteFile(base+".html", []byte("<!-- "+loc+" -->\n"+html), 0o644)
		}
		cancel()
		b.t.Logf("step %q failed; screenshot and HTML in %s", name, dir)
	}
	b.t.Fatalf("step %q: %v", name, err)
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](b *browser, name, expr string) T {
	b.t.Helper()
	sctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(sctx, chromedp.Evaluate[T](expr))
	b.check(name, err)
	return v
}

// cells is the text of every cell of the table rows matching sel.
func (b *browser) cells(sel string) [][]string {
	b.t.Helper()
	return eval[[][]string](b, "cells "+sel,
		fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).map(r => Array.from(r.cells).map(c => c.innerText.trim()))`, sel))
}

// text is the text (innerText) of the first element matching sel, once
// there is one. It is read in the page by one expression, so a page that
// replaces its nodes meanwhile (a navigation finishing, an htmx swap) does
// not fail it with a stale node id, as a query then a read of the node did.
func (b *browser) text(sel string) string {
	b.t.Helper()
	sctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(sctx, chromedp.Poll[[]string](fmt.Sprintf(
		`(() => { const e = document.querySelector(%q); return e ? [e.innerText] : null })()`, sel),
		chromedp.WithPollingTimeout(stepTimeout)))
	b.check("text "+sel, err)
	if len(v) != 1 {
		b.check("text "+sel, fmt.Errorf("no text read"))
	}
	return v[0]
}

// screenshotsEnv names a directory where TestConsoleBrowser saves
// screenshots of its pages (docs/console/ holds the ones the docs show).
const screenshotsEnv = "TOPICGATE_CONSOLE_SCREENSHOTS"

// shoot saves a screenshot of the page as name.png when screenshotsEnv
// names a directory.
func (b *browser) shoot(name string) {
	b.t.Helper()
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		return
	}
	sctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	b.check("screenshot "+name, err)
	require.NoError(b.t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
}

// loadTime is how long the browser took to load the current page, by its
// own Navigation Timing (request to load event end).
func (b *browser) loadTime() time.Duration {
	b.t.Helper()
	ms := eval[float64](b, "load time", `(() => { const n = performance.getEntriesByType("navigation")[0]; return n.loadEventEnd - n.requestStart })()`)
	return time.Duration(ms * float64(time.Millisecond))
}

// login logs in through the form.
func (b *browser) login(base, user, pw string) {
	b.t.Helper()
	b.run("login-"+user,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS("#login-form")),
		chromedp.SendKeys(chromedp.CSS("#user"), user),
		chromedp.SendKeys(chromedp.CSS("#password"), pw),
		chromedp.Click(chromedp.CSS("#login")),
		chromedp.WaitVisible(chromedp.CSS("#whoami")))
}
