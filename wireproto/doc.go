// Package wireproto speaks Mercurial's wire protocol, version 1: the
// client side (HTTP and ssh peers) that hgfs clone uses, and the server
// side, over HTTP and ssh, that hgfs serve uses. It moves bytes and
// knows commands; the stream formats themselves belong to package
// streamclone, changegroups (which the server generates with
// changegroup.GenerateOutgoing: server_cg.go) to package changegroup, the
// bundle2 container, URL quoting and listkeys (pushkey) data to package
// bundle2.
//
// The specification is Mercurial's own source: httppeer.py, sshpeer.py,
// wireprotov1peer.py, wireprotov1server.py, wireprotoserver.py,
// wireprototypes.py, and `hg help internals.wireprotocol`.
//
// # Terminology
//
//   - Peer: a connection to a remote repository (HTTPPeer, SSHPeer), with
//     one method per command hgfs needs: capabilities (fetched when the
//     peer is opened), heads, listkeys, lookup, stream_out, getbundle.
//   - Capabilities (Caps): the server's advertised features, e.g.
//     "httpheader=1024", "streamreqs=generaldelta,revlogv1", and
//     "bundle2=<quoted blob>" whose decoded form is Bundle2Caps (e.g.
//     stream=v2).
//   - Media type: an HTTP response body is application/mercurial-0.1
//     (raw; zlib for getbundle) or -0.2 (a one-byte-length-prefixed
//     compression engine name, then a zstd, zlib or uncompressed body);
//     application/hg-error carries a server error message (mediatype.go).
//     The server's zstd responses come from a small pool of encoders at
//     server.zstdlevel with hg's 2 MiB window, no frame checksum and
//     klauspost's lower-memory mode (server_zstd.go).
//   - Framing (ssh): ordinary responses are "<length>\n<data>"; streams
//     (stream_out, getbundle) are raw and end only where their own format
//     says (ssh.go).
//   - Clone bundles: a server's .hg/clonebundles.manifest, listing
//     bundles on other hosts to seed clones. The client side fetches it
//     (CloneBundlesManifest: clonebundles_manifest or clonebundles),
//     parses it (ParseCloneBundles, bundle specs by bundle2.ParseSpec) and
//     downloads a bundle with no credentials but its URL's
//     (OpenCloneBundle); choosing an entry is the command's. The server
//     advertises and serves the file (server_clonebundles.go).
//   - Nodes are 40-digit lowercase hex strings here, so this package does
//     not depend on revlog.
//
// # Client
//
// Open picks the transport from the URL. An HTTP peer sends each command
// as GET ?cmd=NAME with arguments in X-HgArg-N headers (or the query
// string for servers without httpheader) and advertises the media types
// and compression engines it decodes in X-HgProto-1, but never
// "partial-pull" (a pre-built changegroup bundle cannot feed a stream
// clone). A user and password in an http(s) URL are sent as basic
// authentication to that URL's scheme, host and port only, whatever
// redirects follow; a redirected capabilities request moves the peer to
// the URL it ended at, as hg's "real URL is ..." does. An ssh peer runs `<ssh> [-p port] [user@]host '<remotecmd> -R
// <path> serve --stdio'` through /bin/sh, as hg does, so the ssh command
// may carry options or be a stand-in script.
//
// StreamCloneArgs builds getbundle's arguments for a bundle2 stream clone
// as exchange._pullbundle2 does with streaming on, without the heads a
// stream-only getbundle does not read.
//
// # Server
//
// Server answers the read-only commands for one repository over both
// transports: it is an http.Handler (server.go), and ServeSSH serves one
// ssh session on a pair of pipes, as `hg serve --stdio`
// (server_ssh.go). The commands are the transport's neither: answer runs
// those whose reply is bytes (server_cmds.go); streamOut, getbundle and
// legacyChangegroup write to a writer the transport hands them once the
// reply is decided (server_stream.go, server_cg.go); the transports only
// frame, compress (HTTP) and report errors their own way (HTTP status or
// hg-error, ssh out-of-band error or the end of the session).
// wireCommands lists every command hg declares with its argument spec,
// which the ssh request decoder reads by.
//
// Over HTTP, a request without ?cmd= gets the repository's landing page
// (web.go); WebDir routes /NAME to the
// Server of each of several repositories and lists them (webdir.go), as
// hgweb's hgwebdir does. Pages show the served view only and treat every
// name, description and the Host header as untrusted: html/template
// escaping, bounded lists, no script.
//
// # Errors
//
// Sentinels (errors.Is): ErrProtocol (malformed response), ErrRemote (the
// server reported an error; *RemoteError reads "remote error:\n..."),
// ErrNotRepository (the URL is not Mercurial; *NotRepositoryError shows
// the start of what came back, as hg does), ErrTooLarge (a small response
// over Options.MaxResponse), ErrUnsupported (URL scheme, protocol
// version, compression engine), ErrConnection (*ConnError reads like hg's
// "error: Connection refused"), ErrLookup (*LookupError reads as the
// server's answer, "unknown revision 'x'"). *HTTPError reads "HTTP Error
// 404: Not Found" (401: "authorization failed", or "http authorization
// required for URL" when the request had no credentials to send). Every message is what hg would print after "abort: ".
// Context cancellation surfaces as the context's error.
//
// Untrusted input: capability lists, frames and headers are bounded
// (maxCaps, MaxResponse, maxLineLen, 500 lines of ssh banner), and so are
// a server's requests (maxArgBytes, maxSSHLine, maxSSHStarArgs); no
// allocation is sized by a length field before that many bytes arrive;
// zstd windows are capped. Decoders have Fuzz targets.
//
// # Concurrency
//
// A peer runs one command at a time (the ssh transport is a single pipe).
// Over ssh a stream response holds the connection until its reader is
// closed; a reader closed before its end marks the peer unusable rather
// than letting the next response be misparsed. Contexts bound every call:
// an HTTP request is cancelled, an ssh command's process group is killed.
package wireproto
