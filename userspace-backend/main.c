// SPDX-License-Identifier: GPL-2.0
/*
 * Options, listening sockets, signals, startup and shutdown.
 *
 * Exit status: 0 after SIGTERM/SIGINT (in-flight requests drained),
 * 1 on a runtime error (cannot open the export, bind, ...), 2 on a usage
 * error.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "fairq_nbd.h"
#include "nbd_proto.h"

#ifndef FAIRQ_NBD_VERSION
#define FAIRQ_NBD_VERSION	"unknown"
#endif

enum { EXIT_USAGE = 2, MAX_LISTEN = 8 };


struct server_cfg cfg = {
	.tcp_addr = "127.0.0.1",
	.max_conns = 64,
	.drain_timeout_s = DRAIN_TIMEOUT_S,
	.cache = CACHE_PAGE,
	.exp = { .name = "", .desc = "fairq-nbd export" },
};

static const char usage_text[] =
"Usage: fairq-nbd [OPTIONS] FILE\n"
"Export FILE (a regular file or block device) over NBD.\n"
"\n"
"Listening (at least one of -u and -p):\n"
"  -u, --unix PATH        listen on the unix socket PATH\n"
"  -p, --port PORT        listen on TCP PORT\n"
"  -b, --bind ADDR        TCP bind address (default 127.0.0.1; ::1 also\n"
"                         allowed); any other address needs --allow-remote\n"
"      --allow-remote     permit a non-loopback --bind address\n"
"      --max-conns N      concurrent connections (default 64)\n"
"      --drain-timeout S  on SIGTERM, cut clients that have not taken\n"
"                         their replies after S seconds (default 10)\n"
"\n"
"Export:\n"
"  -s, --size SIZE        create FILE (sparse) or extend it to SIZE bytes;\n"
"                         suffixes K, M, G, T (powers of 1024)\n"
"  -r, --read-only        export read-only (writes fail with EPERM)\n"
"  -n, --name NAME        export name (default \"\"; \"\" always matches)\n"
"      --cache MODE       page (default): buffered I/O through the page\n"
"                         cache, FLUSH/FUA sync it; none: O_DIRECT with\n"
"                         libaio (unaligned edges read-modify-written)\n"
"      --buffered         same as --cache=page (kept for old scripts)\n"
"\n"
"Device model (each off unless given):\n"
"      --bw MIBPS         bandwidth [MiB/s] shared by all READ/WRITE data\n"
"      --iops N           request starts per second\n"
"      --latency-us N     fixed service time per request [us]\n"
"      --depth N          requests the disk serves at once (1..1024,\n"
"                         default 64)\n"
"      --fair cfq|sfq     queue requests in the fairq sched/ core, one flow\n"
"                         per connection\n"
"      --fair-set NAME=VAL  a sched/ tunable (quantum, fairness, buckets,\n"
"                         idle_us, ...; see sched/fq_sched.h), repeatable\n"
"\n"
"  -v, --verbose          log every connection and option\n"
"  -V, --version          version and whether --fair is built in\n"
"  -h, --help             this text\n"
"\n"
"Exit status: 0 after SIGTERM or SIGINT, 1 on a runtime error, 2 on a\n"
"usage error.\n";

enum {
	OPT_ALLOW_REMOTE = 256, OPT_MAX_CONNS, OPT_DRAIN, OPT_CACHE,
	OPT_BUFFERED, OPT_BW,
	OPT_IOPS, OPT_LATENCY, OPT_DEPTH, OPT_FAIR, OPT_FAIR_SET,
};

static const struct option longopts[] = {
	{ "unix", required_argument, NULL, 'u' },
	{ "port", required_argument, NULL, 'p' },
	{ "bind", required_argument, NULL, 'b' },
	{ "allow-remote", no_argument, NULL, OPT_ALLOW_REMOTE },
	{ "max-conns", required_argument, NULL, OPT_MAX_CONNS },
	{ "drain-timeout", required_argument, NULL, OPT_DRAIN },
	{ "size", required_argument, NULL, 's' },
	{ "read-only", no_argument, NULL, 'r' },
	{ "name", required_argument, NULL, 'n' },
	{ "cache", required_argument, NULL, OPT_CACHE },
	{ "buffered", no_argument, NULL, OPT_BUFFERED },
	{ "bw", required_argument, NULL, OPT_BW },
	{ "iops", required_argument, NULL, OPT_IOPS },
	{ "latency-us", required_argument, NULL, OPT_LATENCY },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "fair", required_argument, NULL, OPT_FAIR },
	{ "fair-set", required_argument, NULL, OPT_FAIR_SET },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void __noreturn usage_error(const char *fmt, const char *key,
				   const char *val)
{
	fprintf(stderr, "fairq-nbd: ");
	fprintf(stderr, fmt, key, val);
	fprintf(stderr, "\nTry 'fairq-nbd --help'.\n");
	exit(EXIT_USAGE);
}

/* Unsigned decimal in [min, max]; the whole string must be a number. */
static uint64_t parse_uint(const char *key, const char *val, uint64_t min,
			   uint64_t max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(val, &end, 10);
	if (errno || end == val || *end || val[0] == '-')
		usage_error("%s: '%s' is not a number", key, val);
	if (v < min || v > max)
		usage_error("%s: '%s' is out of range", key, val);
	return v;
}

/* SIZE with an optional K/M/G/T suffix (binary). */
static uint64_t parse_size(const char *key, const char *val)
{
	static const char sfx[] = "KMGT";
	unsigned long long v;
	const char *s;
	char *end;

	errno = 0;
	v = strtoull(val, &end, 10);
	if (errno || end == val || val[0] == '-')
		usage_error("%s: '%s' is not a size", key, val);
	if (*end) {
		s = strchr(sfx, *end & ~0x20);
		if (!s || end[1])
			usage_error("%s: '%s' has an unknown suffix", key, val);
		if (v > (UINT64_MAX >> (10 * (s - sfx + 1))))
			usage_error("%s: '%s' is too large", key, val);
		v <<= 10 * (s - sfx + 1);
	}
	if (!v || v > (uint64_t)INT64_MAX)
		usage_error("%s: '%s' is out of range", key, val);
	return v;
}

/* --bw in MiB/s, decimals allowed ("0.5"). */
static uint64_t parse_bw(const char *key, const char *val)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(val, &end);
	if (errno || end == val || *end || !(v > 0) || v > 1e6)
		usage_error("%s: '%s' is not a bandwidth in MiB/s (0 < x <= 1e6)",
			    key, val);
	return (uint64_t)(v * 1048576.0);
}

static bool addr_is_loopback(const char *addr)
{
	struct in6_addr a6;
	struct in_addr a4;

	if (inet_pton(AF_INET, addr, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, addr, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return false;
}

/* One option; unit-bearing values go through their own parser. */
static void parse_one(int c, uint64_t *size)
{
	switch (c) {
	case 'u':
		cfg.unix_path = optarg;
		break;
	case 'p':
		parse_uint("--port", optarg, 1, 65535);
		cfg.tcp_port = optarg;
		break;
	case 'b':
		cfg.tcp_addr = optarg;
		break;
	case OPT_ALLOW_REMOTE:
		cfg.allow_remote = true;
		break;
	case OPT_MAX_CONNS:
		cfg.max_conns = parse_uint("--max-conns", optarg, 1, 1024);
		break;
	case OPT_DRAIN:
		cfg.drain_timeout_s = parse_uint("--drain-timeout",
						 optarg, 0, 3600);
		break;
	case 's':
		*size = parse_size("--size", optarg);
		break;
	case 'r':
		cfg.exp.read_only = true;
		break;
	case 'n':
		cfg.exp.name = optarg;
		break;
	case OPT_CACHE:
		if (!strcmp(optarg, "page"))
			cfg.cache = CACHE_PAGE;
		else if (!strcmp(optarg, "none"))
			cfg.cache = CACHE_NONE;
		else
			usage_error("--cache=%s: %s", optarg,
				    "not a cache mode (page or none)");
		break;
	case OPT_BUFFERED:
		cfg.cache = CACHE_PAGE;
		break;
	case OPT_BW:
		cfg.dm.bw_bps = parse_bw("--bw", optarg);
		break;
	case OPT_IOPS:
		cfg.dm.iops = parse_uint("--iops", optarg, 1, 10000000);
		break;
	case OPT_LATENCY:
		cfg.dm.latency_ns = 1000 *
			parse_uint("--latency-us", optarg, 0, 60000000);
		break;
	case OPT_DEPTH:
		cfg.dm.depth = parse_uint("--depth", optarg, 1, DEPTH_MAX);
		break;
	case OPT_FAIR:
		cfg.fair = optarg;
		break;
	case OPT_FAIR_SET:
		if (cfg.nfair_set == ARRAY_SIZE(cfg.fair_set))
			usage_error("--fair-set=%s: %s", optarg,
				    "too many --fair-set options");
		cfg.fair_set[cfg.nfair_set++] = optarg;
		break;
	case 'v':
		cfg.verbose++;
		break;
	case 'h':
		fputs(usage_text, stdout);
		exit(0);
	case 'V':
		printf("fairq-nbd %s fair=%s\n", FAIRQ_NBD_VERSION,
		       glue_fair_available() ? "yes" : "no");
		exit(0);
	default:
		fputs("Try 'fairq-nbd --help'.\n", stderr);
		exit(EXIT_USAGE);
	}
}

/* What no single option can tell: listeners, FILE, combinations. */
static void check_opts(int argc, char **argv)
{
	if (optind != argc - 1)
		usage_error("%s%s", "expected exactly one FILE argument", "");
	cfg.exp.path = argv[optind];
	if (!cfg.unix_path && !cfg.tcp_port)
		usage_error("%s%s", "nothing to listen on: give --unix PATH and/or --port PORT", "");
	if (cfg.tcp_port && !cfg.allow_remote && !addr_is_loopback(cfg.tcp_addr))
		usage_error("--bind=%s: %s", cfg.tcp_addr,
			    "not a loopback address; add --allow-remote to bind it");
	if (strlen(cfg.exp.name) > 4096)
		usage_error("%s%s", "--name: longer than 4096 bytes", "");
	if (cfg.fair && !glue_fair_available())
		usage_error("--fair=%s: %s", cfg.fair,
			    "not available: built without ../sched (rebuild with FAIR=yes once sched/ compiles)");
}

static uint64_t parse_opts(int argc, char **argv)
{
	uint64_t size = 0;
	int c;

	while ((c = getopt_long(argc, argv, "u:p:b:s:rn:vVh", longopts,
				NULL)) != -1)
		parse_one(c, &size);
	check_opts(argc, argv);
	return size;
}

static int listen_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_msg("--unix=%s: path longer than %zu bytes", path,
			sizeof(sa.sun_path) - 1);
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 64) < 0) {
		log_msg("--unix=%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int listen_tcp(const char *addr, const char *port, int *fds, int max)
{
	struct addrinfo hints = {
		.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *res, *ai;
	int n = 0, err, one = 1;

	err = getaddrinfo(addr, port, &hints, &res);
	if (err) {
		log_msg("--bind=%s --port=%s: %s", addr, port, gai_strerror(err));
		return -1;
	}
	for (ai = res; ai && n < max; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);

		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
		    listen(fd, 64) < 0) {
			log_msg("--bind=%s --port=%s: %s", addr, port,
				strerror(errno));
			close(fd);
			continue;
		}
		fds[n++] = fd;
	}
	freeaddrinfo(res);
	return n ? n : -1;
}

static void peer_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	int port = 0;

	snprintf(buf, len, "unix");
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0)
		return;
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &s->sin_addr, host, sizeof(host));
		port = ntohs(s->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof(host));
		port = ntohs(s->sin6_port);
	} else {
		return;
	}
	snprintf(buf, len, "%s:%d", host, port);
}

/*
 * Replies queue in the socket up to its send buffer; a unix socket's
 * default (net.core.wmem_default, 208 KiB) holds a fifth of a 1 MiB
 * READ reply, so the reader waited on the client for every one (1M
 * QD8 reads: 2,532 against 3,218 MiB/s with 4 MiB, medians of 6).
 */
static void accept_one(int lfd)
{
	int fd, one = 1, sndbuf = CONN_SNDBUF;
	char peer[64];

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
			log_msg("accept: %s", strerror(errno));
		return;
	}
	peer_name(fd, peer, sizeof(peer));
	if (strcmp(peer, "unix"))
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
			   sizeof(one));
	else	/* TCP sizes its own; net.core.wmem_max caps this */
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf,
			   sizeof(sndbuf));
	conn_start(fd, peer);
}

/* Accept until SIGTERM/SIGINT arrives on @sfd. */
static void serve(int *lfds, int nl, int sfd)
{
	struct pollfd pfd[MAX_LISTEN + 1];
	int i;

	for (i = 0; i < nl; i++)
		pfd[i] = (struct pollfd){ .fd = lfds[i], .events = POLLIN };
	pfd[nl] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	for (;;) {
		if (poll(pfd, nl + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_msg("poll: %s", strerror(errno));
			return;
		}
		if (pfd[nl].revents) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si))
				log_msg("signal=%u: draining %u connection(s) and exiting",
					si.ssi_signo, conn_count());
			return;
		}
		for (i = 0; i < nl; i++)
			if (pfd[i].revents & POLLIN)
				accept_one(lfds[i]);
	}
}

static int open_listeners(int *lfds)
{
	int n = 0, t;

	if (cfg.unix_path) {
		lfds[n] = listen_unix(cfg.unix_path);
		if (lfds[n] < 0)
			return -1;
		n++;
	}
	if (cfg.tcp_port) {
		t = listen_tcp(cfg.tcp_addr, cfg.tcp_port, lfds + n,
			       MAX_LISTEN - n);
		if (t < 0)
			return -1;
		n += t;
	}
	return n;
}

static int block_signals(void)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	return signalfd(-1, &set, SFD_CLOEXEC);
}

int main(int argc, char **argv)
{
	int lfds[MAX_LISTEN], nl, sfd, i;
	uint64_t size;

	setvbuf(stderr, NULL, _IOLBF, 0);
	/*
	 * Payload buffers (up to 32 MiB) come and go with every request.
	 * glibc would mmap and unmap the large ones each time, and every
	 * page of a fresh mapping faults on first touch (measured: a 1 MiB
	 * read from the page cache took 2.6-4 ms instead of ~0.1 ms).  Keep
	 * them in the heap: fixed thresholds at the largest payload.
	 */
	mallopt(M_MMAP_THRESHOLD, NBD_MAX_PAYLOAD);
	mallopt(M_TRIM_THRESHOLD, 4 * NBD_MAX_PAYLOAD);
	size = parse_opts(argc, argv);
	sfd = block_signals();
	if (sfd < 0 || export_open(&cfg.exp, size, &cfg.cache) < 0)
		return 1;
	devmodel_init(&cfg.dm);
	if (glue_init(cfg.fair, devmodel_depth(), cfg.fair_set,
		      cfg.nfair_set) < 0 || engine_start() < 0)
		return 1;
	nl = open_listeners(lfds);
	if (nl < 0)
		return 1;
	log_msg("listening: unix=%s tcp=%s:%s bw=%lluB/s iops=%llu latency=%lluns depth=%u fair=%s",
		cfg.unix_path ? cfg.unix_path : "-", cfg.tcp_addr,
		cfg.tcp_port ? cfg.tcp_port : "-",
		(unsigned long long)cfg.dm.bw_bps,
		(unsigned long long)cfg.dm.iops,
		(unsigned long long)cfg.dm.latency_ns, devmodel_depth(),
		cfg.fair ? cfg.fair : "fifo");
	serve(lfds, nl, sfd);
	for (i = 0; i < nl; i++)
		close(lfds[i]);
	if (cfg.unix_path)
		unlink(cfg.unix_path);
	conn_shutdown_all();
	conn_wait_all(cfg.drain_timeout_s);
	engine_stop();
	glue_fini();
	export_close(&cfg.exp);
	log_msg("exit: clean");
	return 0;
}
