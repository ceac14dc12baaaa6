package config

import (
	"runtime"
	"sort"
	"strconv"
)

// Known is one setting hgfs reads: where it lives, its default, and what it
// does. Every setting hgfs reads is declared here, so `hgfs config` and the
// docs can list them and code reads them through one table.
type Known struct {
	Section, Name string
	Default       string
	Doc           string
}

// Key returns "section.name".
func (k Known) Key() string { return k.Section + "." + k.Name }

// The settings. Names shared with Mercurial mean what they mean there.
var (
	UIQuiet     = Known{"ui", "quiet", "false", "suppress output (as -q)"}
	UIVerbose   = Known{"ui", "verbose", "false", "more output (as -v)"}
	UIDebug     = Known{"ui", "debug", "false", "debug output (as --debug)"}
	UITraceback = Known{"ui", "traceback", "false", "print the Go stack of an abort (as --traceback)"}
	UISSH       = Known{"ui", "ssh", "ssh", "command used for ssh:// sources (as --ssh)"}
	UIRemoteCmd = Known{"ui", "remotecmd", "hg", "hg command run on the ssh remote (as --remotecmd)"}
	UITimeout   = Known{"ui", "timeout", "600", "seconds to wait for a repository lock another process holds (unbundle, pull, recover, bundle, clone)"}

	UICloneBundles        = Known{"ui", "clonebundles", "true", "clone from the clone bundles a server advertises (.hg/clonebundles.manifest), then pull the rest"}
	UICloneBundleFallback = Known{"ui", "clonebundlefallback", "false", "clone normally when a clone bundle cannot be fetched, instead of aborting"}
	UICloneBundlePrefers  = Known{"ui", "clonebundleprefers", "", "KEY=VALUE attributes (VERSION=v2, COMPRESSION=zstd, ...) whose clone bundles come first, in order"}

	UIReportUntrusted = Known{"ui", "report_untrusted", "true", "warn when a repository's .hg/hgrc is ignored because its owner is not trusted (--debug always warns)"}
	TrustedUsers      = Known{"trusted", "users", "", "owners (names, '*' for any) whose repository .hg/hgrc files are read although the current user does not own them"}
	TrustedGroups     = Known{"trusted", "groups", "", "groups (names, '*' for any): a repository's .hg/hgrc that belongs to one is read although the current user does not own it"}

	EvolutionAll              = Known{"experimental", "evolution", "", "obsolescence features: a boolean for all, or a list of createmarkers, exchange, ... (all: every one)"}
	EvolutionCreateMarkers    = Known{"experimental", "evolution.createmarkers", "", "accept obsolescence markers from bundles and pulls (default: from experimental.evolution)"}
	EvolutionExchange         = Known{"experimental", "evolution.exchange", "", "pull obsolescence markers (default: from experimental.evolution; never without createmarkers)"}
	EvolutionBundleObsmarker  = Known{"experimental", "evolution.bundle-obsmarker", "false", "hgfs bundle -t v2 streams a repository that has obsolescence markers, with them (else it refuses, as hg bundle does)"}
	Changegroup3              = Known{"experimental", "changegroup3", "false", "hgfs serve offers changegroup version 03 (hg's setting)"}
	CommandsUpdateRequireDest = Known{"commands", "update.requiredest", "false", "after pull or unbundle, do not suggest 'hg update' (hg's setting)"}
	PathsDefault              = Known{"paths", "default", "", "the repository pull reads from when no source is given"}
	PhasesPublish             = Known{"phases", "publish", "true", "the repository is publishing: what it shares (hgfs serve, bundle, a local clone) is public"}
	ProgressDisable           = Known{"progress", "disable", "false", "draw no progress bar"}
	ProgressAssumeTTY         = Known{"progress", "assume-tty", "false", "draw the progress bar although stderr is not a terminal"}
	ProgressWidth             = Known{"progress", "width", "", "progress bar width, used when above 20 (default: $COLUMNS when above 20, else 80)"}
	ProgressDelay             = Known{"progress", "delay", "3", "seconds before the progress bar is first drawn (and again after a step's bar completes)"}
	ProgressRefresh           = Known{"progress", "refresh", "0.1", "seconds between redraws of the progress bar"}
	ProgressEstimateInterval  = Known{"progress", "estimateinterval", "60.0", "seconds of recent progress the time left is estimated from (0 or less: all of it)"}

	WorkerBackgroundClose         = Known{"worker", "backgroundclose", strconv.FormatBool(runtime.GOOS == "windows"), "close the large files a clone writes on background goroutines (hg's default: on Windows only, where closing is slow)"}
	WorkerBackgroundCloseMinFiles = Known{"worker", "backgroundcloseminfilecount", "2048", "use background closing only for clones of at least this many files"}
	WorkerBackgroundCloseMaxQueue = Known{"worker", "backgroundclosemaxqueue", "384", "files waiting to be closed before writers wait"}
	WorkerBackgroundCloseThreads  = Known{"worker", "backgroundclosethreadcount", "4", "goroutines closing files in the background"}
	ProfilingType                 = Known{"profiling", "type", "cpu", "what --profile records: cpu (hg's stat and ls mean cpu), heap, allocs, block, mutex, goroutine, trace"}
	ProfilingFormat               = Known{"profiling", "format", "text", "--profile output: text (top functions), pprof (go tool pprof), kcachegrind (callgrind)"}
	ProfilingOutput               = Known{"profiling", "output", "", "file for --profile output (default: stderr for text, hgfs.prof otherwise)"}
	ProfilingFreq                 = Known{"profiling", "freq", "1000", "CPU sampling rate in Hz"}
	ProfilingTop                  = Known{"profiling", "top", "30", "rows in the text profile"}
	ServerUncompressed            = Known{"server", "uncompressed", "true", "allow stream clones"}
	ServerUncompressedAllowSecret = Known{"server", "uncompressedallowsecret", "false", "allow stream clones while secret changesets exist"}
	ServerBundle2Stream           = Known{"server", "bundle2.stream", "true", "offer stream clones inside bundle2 (v2)"}
	ServerPreferUncompressed      = Known{"server", "preferuncompressed", "false", "advertise stream-preferred"}
	ServerMaxHTTPHeaderLen        = Known{"server", "maxhttpheaderlen", "1024", "longest HTTP header hgfs serve advertises it accepts (httpheader=; 0 or less keeps 1024)"}
	WebBaseURL                    = Known{"web", "baseurl", "", "URL hgfs serve's pages show in their clone commands (behind a proxy, say); default: the request's scheme and Host"}
	WebName                       = Known{"web", "name", "", "repository name on hgfs serve's pages (default: the name it is served under, else its directory's name)"}
	WebDescription                = Known{"web", "description", "", "repository description on hgfs serve's pages"}
	WebContact                    = Known{"web", "contact", "", "repository contact on hgfs serve's pages"}
	WebHidden                     = Known{"web", "hidden", "false", "hgfs serve --web-conf serves the repository but does not list it"}
	WebAllowRead                  = Known{"web", "allow_read", "", "hgfs serve refuses the repository (401) unless this list is empty or holds * (it knows no users)"}
	WebDenyRead                   = Known{"web", "deny_read", "", "hgfs serve refuses the repository (401) when this list is not empty (it knows no users)"}
	WebDescend                    = Known{"web", "descend", "true", "hgfs serve --web-conf's listings show the repositories of subdirectories too"}
	HgfsServeStreams              = Known{"hgfs", "serve-streams", "16", "stream clones hgfs serve sends at once; later ones wait their turn (0: no bound)"}
	HgfsServeWriteTimeout         = Known{"hgfs", "serve-write-timeout", "0", "how long hgfs serve waits for a client that accepts none of a reply before dropping it (0: never, as hg serve)"}
	HgfsCloneWriters              = Known{"hgfs", "clone-writers", "4", "goroutines writing the small files of a clone into a directory (0: the applier writes them; at most 64)"}
	HgfsVirtualCheckout           = Known{"hgfs", "virtual-checkout", "true", "a mounted clone's working copy (clone --mount, update on a mount) names each file's revision instead of writing its bytes; a file is copied into the cache when first written"}
	HgfsCache                     = Known{"hgfs", "cache", "", "cache directory for clones into a mount (default $XDG_CACHE_HOME/hgfs)"}
	HgfsCommitInterval            = Known{"hgfs", "commit-interval", "50ms", "how long the background committer gathers changes into one index commit"}
	HgfsQueueSize                 = Known{"hgfs", "queue-size", "16384", "files with changes waiting for the background committer before writers wait"}
	HgfsWriteBatch                = Known{"hgfs", "write-batch", "8388608", "bytes of finished filelogs unbundle and pull keep in memory before writing them together (fewer writes; 0 writes each filelog when its group ends)"}
	HgfsCompact                   = Known{"hgfs", "compact", "true", "compact a mounted cache in the background: copy live bytes out of mostly dead data files and delete them while the mount is idle"}
	HgfsCompactGarbage            = Known{"hgfs", "compact-garbage", "0.2", "compaction is due when dead bytes exceed this fraction of the live bytes plus hgfs.compact-slack"}
	HgfsCompactSlack              = Known{"hgfs", "compact-slack", "33554432", "dead bytes in a cache that never make compaction due"}
	HgfsCompactIdle               = Known{"hgfs", "compact-idle", "2s", "how long a mounted cache goes without changes before background compaction starts"}
	HgfsCompactRate               = Known{"hgfs", "compact-rate", "33554432", "bytes per second background compaction reads and writes at most (a byte copied counts twice)"}
	HgfsS3Endpoint                = Known{"hgfs", "s3-endpoint", "", "S3 endpoint URL of clonebundles refresh's store, e.g. http://127.0.0.1:8333 (default: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, else Amazon S3)"}
	HgfsS3Region                  = Known{"hgfs", "s3-region", "", "S3 region of clonebundles refresh's store (default: $AWS_REGION, $AWS_DEFAULT_REGION)"}
	HgfsS3AccessKey               = Known{"hgfs", "s3-access-key", "", "S3 access key id of clonebundles refresh (default: $AWS_ACCESS_KEY_ID, else ~/.aws/credentials)"}
	HgfsS3SecretKey               = Known{"hgfs", "s3-secret-key", "", "S3 secret key of clonebundles refresh (default: $AWS_SECRET_ACCESS_KEY)"}
	HgfsS3PublicURL               = Known{"hgfs", "s3-public-url", "", "base URL clients download clone bundles under (public-read bucket or CDN); empty: pre-signed URLs"}
	HgfsS3URLExpiry               = Known{"hgfs", "s3-url-expiry", "168h", "how long clonebundles refresh's pre-signed URLs stay valid (at most 168h; refresh more often)"}
	HgfsS3Grace                   = Known{"hgfs", "s3-grace", "24h", "how long clonebundles refresh keeps the bundles a replaced manifest listed, for downloads in progress"}
	HgfsS3Timeout                 = Known{"hgfs", "s3-timeout", "60s", "bound on each request clonebundles refresh makes to the object store other than uploads (0: none)"}
	// Alias is the [alias] section: each NAME there is a command alias.
	Alias = Known{"alias", "NAME", "", "command alias as hg's: NAME = COMMAND [ARGS] ($1, $2... from the arguments); shell aliases (!...) are refused"}

	HgfsDurable = Known{"hgfs", "durable", "true", "fsync data before each index commit; false is UNSAFE (a power loss or OS crash can lose committed data; kill -9 stays safe)"}
)

// All lists every known setting, sorted by key.
func All() []Known {
	all := []Known{Changegroup3, CommandsUpdateRequireDest, EvolutionAll, EvolutionBundleObsmarker, EvolutionCreateMarkers, EvolutionExchange, UIQuiet, UIVerbose, UIDebug, UITraceback, UISSH, UIRemoteCmd,
		UITimeout, UICloneBundles, UICloneBundleFallback, UICloneBundlePrefers, UIReportUntrusted, TrustedUsers, TrustedGroups, PathsDefault, PhasesPublish, ProgressDisable, ProgressAssumeTTY, ProgressWidth, ProgressDelay, ProgressRefresh, ProgressEstimateInterval,
		WorkerBackgroundClose, WorkerBackgroundCloseMinFiles, WorkerBackgroundCloseMaxQueue, WorkerBackgroundCloseThreads,
		ProfilingType, ProfilingFormat, ProfilingOutput, ProfilingFreq, ProfilingTop,
		ServerUncompressed, ServerUncompressedAllowSecret, ServerBundle2Stream, ServerPreferUncompressed, ServerMaxHTTPHeaderLen,
		HgfsCache, HgfsCloneWriters, HgfsVirtualCheckout, HgfsCommitInterval, HgfsServeStreams, HgfsServeWriteTimeout, HgfsQueueSize, HgfsDurable, HgfsWriteBatch,
		HgfsCompact, HgfsCompactGarbage, HgfsCompactSlack, HgfsCompactIdle, HgfsCompactRate,
		HgfsS3Endpoint, HgfsS3Region, HgfsS3AccessKey, HgfsS3SecretKey, HgfsS3PublicURL, HgfsS3URLExpiry, HgfsS3Grace, HgfsS3Timeout,
		WebBaseURL, WebName, WebDescription, WebContact, WebHidden, WebDescend, WebAllowRead, WebDenyRead, Alias}
	sort.Slice(all, func(i, j int) bool { return all[i].Key() < all[j].Key() })
	return all
}

// Get returns k's value, or its default.
func (c *Config) Get(k Known) string { return c.String(k.Section, k.Name, k.Default) }

// GetBool returns k as a boolean.
func (c *Config) GetBool(k Known) (bool, error) {
	def, _ := parseBool(k.Default)
	return c.Bool(k.Section, k.Name, def)
}

// GetInt returns k as an integer.
func (c *Config) GetInt(k Known) (int, error) {
	def, _ := strconv.Atoi(k.Default)
	return c.Int(k.Section, k.Name, def)
}
