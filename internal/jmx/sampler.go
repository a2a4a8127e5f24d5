package jmx

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// HTTP Request samplers and what applies to them: the server, the
// parameters, the headers and the timers.

// header is one request header.
type headerOut struct{ name, value string }

// stepOut is one translated sampler.
type stepOut struct {
	el       *element
	name     string
	method   string
	url      string
	headers  []headerOut
	body     string
	hasBody  bool
	status   []int
	json     []jsonOut
	contains string
	matches  string
	captures []captureOut
	pause    time.Duration
}

type jsonOut struct {
	path   string
	exists int // 1 exists, -1 absent, 0 value
	value  string
	kind   string // "number", "bool", "null", "string"
}

type captureOut struct {
	name, kind, src string // kind: json, regex
	group, match    int
	headers         bool
	def             string
	hasDef          bool
}

// sampler translates one HTTP Request with what applies to it.
func (im *importer) sampler(el *element, sc scope) *stepOut {
	st := &stepOut{el: el, method: im.method(el)}
	if st.method == "" {
		return nil
	}
	origin, path, ok := im.where(el, sc)
	if !ok {
		return nil
	}
	p, ok := im.tmpl(el, path)
	if !ok {
		return nil
	}
	st.url = p
	if origin != im.base {
		st.url = origin + p
	}
	if !im.parameters(st, el) {
		return nil
	}
	im.headers(st, sc)
	im.timers(st, sc)
	for _, pp := range sc.post {
		im.extractor(st, pp)
	}
	for _, a := range sc.asserts {
		im.assertion(st, a)
	}
	im.name(st)
	return st
}

// method is the HTTP method of sampler el, or "" (el listed) when the
// sampler cannot be translated: a method a scenario does not send, or a
// file upload.
func (im *importer) method(el *element) string {
	m := strings.ToUpper(el.str("HTTPSampler.method"))
	if m == "" {
		m = "GET"
	}
	if !slices.Contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}, m) {
		im.skip(el, "method %s is not one a scenario sends", m)
		return ""
	}
	if f := prop(el.n, "HTTPsampler.Files"); f != nil && len(f.kids) > 0 && len(prop(f, "HTTPFileArgs.files").kids) > 0 {
		im.skip(el, "file uploads are not translated")
		return ""
	}
	if el.boolean("HTTPSampler.image_parser", false) {
		im.note("sampler %q: embedded resources are not fetched", el.name())
	}
	if !el.boolean("HTTPSampler.use_keepalive", true) {
		im.note("sampler %q: JMeter opens a new connection per request; showdown users keep theirs alive", el.name())
	}
	return m
}

// where is the server (origin) and path sampler el sends to: its own
// settings, else the defaults' (inner first). The first sampler also
// sets the scenario's base URL: the defaults' server when they name one.
func (im *importer) where(el *element, sc scope) (origin, path string, ok bool) {
	setting := func(key string) string {
		if v := el.str(key); v != "" {
			return v
		}
		return defaultSetting(sc, key)
	}
	// holder is the element a setting is written in, for messages.
	holder := func(key string) *element {
		if el.str(key) != "" {
			return el
		}
		for i := len(sc.defaults) - 1; i >= 0; i-- {
			if sc.defaults[i].str(key) != "" {
				return sc.defaults[i]
			}
		}
		return el
	}
	path = el.str("HTTPSampler.path")
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		u, err := url.Parse(path)
		if err != nil {
			im.skip(el, "bad URL %q", path)
			return "", "", false
		}
		origin = u.Scheme + "://" + u.Host
		path = strings.TrimPrefix(path, origin)
	} else {
		o, ok := im.origin(holder, setting)
		if !ok {
			im.skip(el, "the server name, port and protocol must be constants or ${__P(name,default)} (here or in HTTP Request Defaults)")
			return "", "", false
		}
		origin = o
		if path == "" {
			path = setting("HTTPSampler.path")
		}
	}
	if path == "" || !strings.HasPrefix(path, "/") && !strings.HasPrefix(path, "${") {
		path = "/" + path
	}
	if im.base == "" {
		im.base = origin
		self := func(string) *element { return el }
		if o, ok := im.origin(self, func(key string) string { return defaultSetting(sc, key) }); ok {
			im.base = o
		}
	}
	return origin, path, true
}

// origin is the scheme, host and port that setting gives (holder names
// the element each is written in), the port left out where it is the
// scheme's own; false when one is not a constant or there is no host.
func (im *importer) origin(holder func(key string) *element, setting func(key string) string) (string, bool) {
	proto, _, ok1 := im.literal(holder("HTTPSampler.protocol"), setting("HTTPSampler.protocol"))
	host, _, ok2 := im.literal(holder("HTTPSampler.domain"), setting("HTTPSampler.domain"))
	port, _, ok3 := im.literal(holder("HTTPSampler.port"), setting("HTTPSampler.port"))
	if !ok1 || !ok2 || !ok3 || host == "" {
		return "", false
	}
	if proto == "" {
		proto = "http"
	}
	o := strings.ToLower(proto) + "://" + host
	if port != "" && !(proto == "http" && port == "80" || proto == "https" && port == "443") {
		o += ":" + port
	}
	return o, true
}

// parameters translates el's parameters: a raw body, a form's body, or
// a query; false (el listed) when one cannot be translated.
func (im *importer) parameters(st *stepOut, el *element) bool {
	args := arguments(prop(el.n, "HTTPsampler.Arguments"))
	if len(args) == 0 {
		return true
	}
	if el.boolean("HTTPSampler.postBodyRaw", false) {
		body, ok := im.tmpl(el, args[0].value)
		st.body, st.hasBody = body, true
		return ok
	}
	var parts []string
	for _, a := range args {
		n, ok1 := im.tmpl(el, a.name)
		v, ok2 := im.tmpl(el, a.value)
		if !ok1 || !ok2 {
			return false
		}
		if a.encode {
			n, v = encodeLiteral(n), encodeLiteral(v)
		}
		if a.useEquals || v != "" {
			parts = append(parts, n+"="+v)
		} else {
			parts = append(parts, n)
		}
	}
	q := strings.Join(parts, "&")
	switch st.method {
	case "POST", "PUT", "PATCH":
		st.body, st.hasBody = q, true
		st.headers = append(st.headers, headerOut{"Content-Type", "application/x-www-form-urlencoded"})
	default:
		if strings.Contains(st.url, "?") {
			st.url += "&" + q
		} else {
			st.url += "?" + q
		}
	}
	return true
}

// headers adds the header managers' headers in scope: inner managers
// replace outer ones' headers of the same name.
func (im *importer) headers(st *stepOut, sc scope) {
	for _, hm := range sc.headers {
		coll := prop(hm.n, "HeaderManager.headers")
		if coll == nil {
			continue
		}
		for _, h := range coll.kids {
			name := propText(h, "Header.name")
			val, ok := im.tmpl(hm, rawProp(h, "Header.value"))
			if name == "" || !ok {
				continue
			}
			st.headers = slices.DeleteFunc(st.headers, func(o headerOut) bool { return strings.EqualFold(o.name, name) })
			st.headers = append(st.headers, headerOut{name, val})
		}
	}
}

// timers adds the constant timers in scope to the step's pause.
func (im *importer) timers(st *stepOut, sc scope) {
	for _, t := range sc.timers {
		raw := t.str("ConstantTimer.delay")
		v, _, ok := im.literal(t, raw)
		ms, err := strconv.Atoi(strings.TrimSpace(v))
		if !ok || err != nil || ms < 0 {
			im.skip(t, "the delay %q is not a number of milliseconds or ${__P(name,ms)}", raw)
			continue
		}
		st.pause += time.Duration(ms) * time.Millisecond
	}
	if len(sc.timers) > 0 {
		im.note("JMeter waits a timer's delay before each sampler in its scope; a scenario pauses after the step, as many times")
	}
}

// name names the step as its sampler, or by its method and URL; names
// label results, so a repeated one gets a number.
func (im *importer) name(st *stepOut) {
	st.name = st.el.name()
	if st.name == "" {
		st.name = st.method + " " + st.url
	}
	if n := im.names[st.name]; n > 0 {
		im.names[st.name] = n + 1
		st.name = fmt.Sprintf("%s (%d)", st.name, n+1)
		im.note("sampler names label results, so repeated names get a number: %q", st.name)
	} else {
		im.names[st.name] = 1
	}
}

// defaultSetting is key in the innermost HTTP Request Defaults that set it.
func defaultSetting(sc scope, key string) string {
	for i := len(sc.defaults) - 1; i >= 0; i-- {
		if v := sc.defaults[i].str(key); v != "" {
			return v
		}
	}
	return ""
}

// encodeLiteral URL-encodes the text outside {{...}} templates.
func encodeLiteral(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			b.WriteString(url.QueryEscape(s))
			return b.String()
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			b.WriteString(url.QueryEscape(s))
			return b.String()
		}
		b.WriteString(url.QueryEscape(s[:i]))
		b.WriteString(s[i : i+j+2])
		s = s[i+j+2:]
	}
}
