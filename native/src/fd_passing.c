/*
 * Passing a POSIX_FD memory handle between two processes of one host: a Unix domain socket with an
 * SCM_RIGHTS message, which Java's own channels cannot send. Natives of dev.imexprobe.cuda.FdPassing;
 * each returns 0 or an errno value, as data. A call a signal interrupts (EINTR: the JVM's own signals reach
 * these threads) is made again; a descriptor is read only from a message that holds exactly one.
 */
#include <errno.h>
#include <jni.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define FD_CLASS "dev/imexprobe/cuda/FdPassing"

static int make_address(JNIEnv *env, jstring path, struct sockaddr_un *addr) {
    memset(addr, 0, sizeof *addr);
    addr->sun_family = AF_UNIX;
    if (path == NULL) return EINVAL;
    const char *p = (*env)->GetStringUTFChars(env, path, NULL);
    if (!p) return ENOMEM;
    int rc = strlen(p) < sizeof addr->sun_path ? 0 : ENAMETOOLONG;
    if (rc == 0) strcpy(addr->sun_path, p);
    (*env)->ReleaseStringUTFChars(env, path, p);
    return rc;
}

static int wait_for(int fd, short events, jint timeout_ms) {
    struct pollfd p = {.fd = fd, .events = events};
    int n;
    do n = poll(&p, 1, timeout_ms);
    while (n < 0 && errno == EINTR);
    if (n < 0) return errno;
    return n == 0 ? ETIMEDOUT : 0;
}

static void store(JNIEnv *env, jintArray out, jint value) {
    (*env)->SetIntArrayRegion(env, out, 0, 1, &value);
}

/* Binds and listens on path (which must not exist); out[0] = the listening socket. */
static jint fd_listen(JNIEnv *env, jclass cls, jstring path, jintArray out) {
    struct sockaddr_un addr;
    int rc = make_address(env, path, &addr);
    if (rc) return rc;
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return errno;
    if (bind(s, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(s, 1) != 0) {
        rc = errno;
        close(s);
        return rc;
    }
    store(env, out, s);
    return 0;
}

/* Accepts one connection on a listening socket and receives one descriptor; out[0] = the descriptor. */
static jint fd_accept_fd(JNIEnv *env, jclass cls, jint server, jint timeout_ms, jintArray out) {
    int rc = wait_for(server, POLLIN, timeout_ms);
    if (rc) return rc;
    int c;
    do c = accept4(server, NULL, NULL, SOCK_CLOEXEC);
    while (c < 0 && errno == EINTR);
    if (c < 0) return errno;
    rc = wait_for(c, POLLIN, timeout_ms);
    if (rc == 0) {
        char byte;
        struct iovec iov = {.iov_base = &byte, .iov_len = 1};
        union {
            struct cmsghdr align;
            char buf[CMSG_SPACE(sizeof(int))];
        } control;
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                             .msg_controllen = sizeof control.buf};
        ssize_t n;
        do n = recvmsg(c, &msg, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        struct cmsghdr *cm = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL;
        int rights = cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS;
        if (rights && cm->cmsg_len == CMSG_LEN(sizeof(int)) && !(msg.msg_flags & MSG_CTRUNC)) {
            int fd;
            memcpy(&fd, CMSG_DATA(cm), sizeof fd);
            store(env, out, fd);
        } else {
            if (rights && cm->cmsg_len > CMSG_LEN(0)) {
                /* not the one descriptor we wait for: close whatever did arrive, so none leaks */
                size_t count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < count; i++) {
                    int fd;
                    memcpy(&fd, CMSG_DATA(cm) + i * sizeof fd, sizeof fd);
                    close(fd);
                }
            }
            rc = n < 0 ? errno : EPROTO;
        }
    }
    close(c);
    return rc;
}

/* Connects to path and sends fd with one byte of payload. */
static jint fd_send_fd(JNIEnv *env, jclass cls, jstring path, jint fd, jint timeout_ms) {
    struct sockaddr_un addr;
    int rc = make_address(env, path, &addr);
    if (rc) return rc;
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return errno;
    int c;
    do c = connect(s, (struct sockaddr *)&addr, sizeof addr);
    while (c != 0 && errno == EINTR);
    if (c != 0 && errno != EISCONN) { /* EISCONN: an interrupted connect that completed meanwhile */
        rc = errno;
        close(s);
        return rc;
    }
    char byte = 'F';
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof control.buf};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof fd);
    rc = wait_for(s, POLLOUT, timeout_ms);
    if (rc == 0) {
        ssize_t n;
        do n = sendmsg(s, &msg, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n != 1) rc = n < 0 ? errno : EPROTO;
    }
    close(s);
    return rc;
}

static jint fd_close(JNIEnv *env, jclass cls, jint fd) {
    return fd >= 0 && close(fd) != 0 ? errno : 0;
}

static const JNINativeMethod fd_methods[] = {
    {"listen", "(Ljava/lang/String;[I)I", (void *)fd_listen},
    {"acceptFd", "(II[I)I", (void *)fd_accept_fd},
    {"sendFd", "(Ljava/lang/String;II)I", (void *)fd_send_fd},
    {"close", "(I)I", (void *)fd_close},
};

int imexprobe_register_fd_passing(JNIEnv *env) {
    jclass cls = (*env)->FindClass(env, FD_CLASS);
    if (cls == NULL) return -1;
    return (*env)->RegisterNatives(env, cls, fd_methods, sizeof fd_methods / sizeof fd_methods[0]) == 0 ? 0 : -1;
}
