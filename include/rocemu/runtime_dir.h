/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The runtime directory, and whom to trust in it. Without XDG_RUNTIME_DIR
 * it is /tmp/rocemu-$UID, a name any user can take first. So the shim, the
 * CLI and the daemon use it only when it is a directory of this user with
 * mode 0700, and talk only to a daemon whose SO_PEERCRED uid is this
 * user's or root's. Header-only, shared like ctrl_io.h. Functions return 0
 * or a negative errno; on -EPERM, why says what is wrong, after the
 * directory's name ("is owned by uid 1001, not by uid 1000 (you)").
 */
#ifndef ROCEMU_RUNTIME_DIR_H
#define ROCEMU_RUNTIME_DIR_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#define ROCEMU_TRUST_WHY_MAX 160	/* enough for every why below */

/*
 * ROCEMU_RUNTIME_DIR, else $XDG_RUNTIME_DIR/rocemu, else /tmp/rocemu-$UID.
 * Returns 0, or -ENAMETOOLONG.
 */
static inline int rocemu_runtime_dir(char *buf, size_t len)
{
	const char *env = getenv("ROCEMU_RUNTIME_DIR");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if (xdg && *xdg)
		n = snprintf(buf, len, "%s/rocemu", xdg);
	else
		n = snprintf(buf, len, "/tmp/rocemu-%u", (unsigned)getuid());
	return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

/*
 * dir is usable: a directory, not a symbolic link (whoever owns a link may
 * turn it elsewhere), owned by this user, mode 0700. -ENOENT when absent.
 */
static inline int rocemu_runtime_dir_check(const char *dir, char *why, size_t len)
{
	struct stat st;

	if (lstat(dir, &st))
		return -errno;
	if (S_ISLNK(st.st_mode))
		snprintf(why, len, "is a symbolic link");
	else if (!S_ISDIR(st.st_mode))
		snprintf(why, len, "is not a directory");
	else if (st.st_uid != getuid())
		snprintf(why, len, "is owned by uid %u, not by uid %u (you)", (unsigned)st.st_uid,
			 (unsigned)getuid());
	else if ((st.st_mode & 0777) != 0700)
		snprintf(why, len, "has mode %04o, not 0700 (others could replace the socket)",
			 (unsigned)(st.st_mode & 0777));
	else
		return 0;
	return -EPERM;
}

/* Create dir with mode 0700 when it does not exist, then check it as above. */
static inline int rocemu_runtime_dir_make(const char *dir, char *why, size_t len)
{
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	return rocemu_runtime_dir_check(dir, why, len);
}

/* A peer we serve or are served by: this user or root. */
static inline bool rocemu_peer_trusted(uid_t uid)
{
	return uid == getuid() || uid == 0;
}

/* The process at the other end of sock runs as this user or root (the kernel's word). */
static inline int rocemu_peer_check(int sock, char *why, size_t len)
{
	struct ucred cred;
	socklen_t cred_len = sizeof(cred);

	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len))
		return -errno;
	if (rocemu_peer_trusted(cred.uid))
		return 0;
	snprintf(why, len, "is served by pid %d of uid %u, neither you (uid %u) nor root",
		 (int)cred.pid, (unsigned)cred.uid, (unsigned)getuid());
	return -EPERM;
}

#endif /* ROCEMU_RUNTIME_DIR_H */
