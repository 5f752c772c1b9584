/*
 * The fake host shared by the fake libcuda and the fake NVML: configuration, GPU identity and presence,
 * IMEX channels, the state directory and injected faults. See fake_common.h and README.md.
 */
#include "fake_common.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


void fake_log(const char *fmt, ...) {
    char line[1024];
    int used = snprintf(line, sizeof line, "fakecuda: %s: ", fake_library);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + used, sizeof line - (size_t)used - 1, fmt, ap);
    va_end(ap);
    size_t len = strlen(line);
    line[len++] = '\n';
    /* One write per message, so lines from concurrent processes do not interleave. */
    ssize_t ignored = write(STDERR_FILENO, line, len);
    (void)ignored;
}

unsigned long long fake_hash64(const void *data, size_t n, unsigned long long seed) {
    const unsigned char *p = data;
    unsigned long long h = 0xcbf29ce484222325ULL ^ seed;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    /* splitmix64 finaliser: FNV alone leaves nearby inputs with similar high bits. */
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}

int fake_random(void *buf, size_t n) {
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

/* ---- configuration ---------------------------------------------------------------------------------- */

static struct fake_config config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static char *trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    size_t len = strlen(s);
    while (len > 0 && isspace((unsigned char)s[len - 1])) s[--len] = '\0';
    return s;
}

/* Whole-string decimal (or 0x hex) number within [min, max]; 0 on success. */
static int parse_number(const char *s, long long min, long long max, long long *out) {
    if (!s || !*s) return -1;
    int base = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, base);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max) return -1;
    *out = v;
    return 0;
}

static int valid_host_id(const char *s) {
    size_t len = strlen(s);
    if (len == 0 || len >= FAKE_HOST_MAX) return 0;
    for (size_t i = 0; i < len; i++)
        if (!isgraph((unsigned char)s[i])) return 0;
    return 1;
}

static void default_host(char *out, size_t cap) {
    /* /etc/machine-id identifies a host across containers that share it; the hostname is a fallback. */
    FILE *f = fopen("/etc/machine-id", "re");
    if (f) {
        char line[256];
        char *got = fgets(line, sizeof line, f);
        fclose(f);
        if (got) {
            char *id = trim(line);
            if (valid_host_id(id)) {
                snprintf(out, cap, "%.*s", FAKE_HOST_MAX - 1, id);
                return;
            }
        }
    }
    char name[256] = "";
    if (gethostname(name, sizeof name - 1) == 0 && valid_host_id(name)) {
        snprintf(out, cap, "%.*s", FAKE_HOST_MAX - 1, name);
        return;
    }
    snprintf(out, cap, "unknown-host");
}

static void copy_env_dir(char *out, size_t cap, const char *env, const char *fallback) {
    const char *v = getenv(env);
    if (v && *v) {
        if (strlen(v) >= cap) {
            fake_log("%s is too long; using %s", env, fallback);
            v = fallback;
        }
    } else {
        v = fallback;
    }
    snprintf(out, cap, "%s", v);
}

/* One key=value of FAKECUDA_CONFIG. Returns NULL when applied, else why it was ignored. */
static const char *apply_config(const char *key, const char *value, int status_set[FAKE_MAX_GPUS]) {
    long long v;
    if (strcmp(key, "host") == 0) {
        if (!valid_host_id(value)) return "host must be 1..127 printable characters without spaces";
        snprintf(config.host, sizeof config.host, "%.*s", FAKE_HOST_MAX - 1, value);
        return NULL;
    }
    if (strcmp(key, "imex.domain") == 0) {
        if (!valid_host_id(value)) return "imex.domain must be 1..127 printable characters without spaces";
        snprintf(config.imex_domain, sizeof config.imex_domain, "%.*s", FAKE_HOST_MAX - 1, value);
        return NULL;
    }
    if (strcmp(key, "gpus") == 0) {
        if (parse_number(value, 0, FAKE_MAX_GPUS, &v) != 0) return "gpus must be 0..64";
        config.gpus = (int)v;
        return NULL;
    }
    int index = -1;
    int consumed = 0;
    if (sscanf(key, "gpu.%d.%n", &index, &consumed) == 1 && consumed > 0 &&
        (strcmp(key + consumed, "compute_mode") == 0 || strcmp(key + consumed, "mig") == 0 ||
         strcmp(key + consumed, "handle_type_fabric") == 0 || strcmp(key + consumed, "memory_used_mib") == 0)) {
        if (index < 0 || index >= FAKE_MAX_GPUS) return "GPU index must be 0..63";
        if (strcmp(key + consumed, "memory_used_mib") == 0) {
            if (parse_number(value, 0, FAKE_TOTAL_MEMORY_MIB, &v) != 0)
                return "memory_used_mib must be 0..143771 (the H200's total)";
            config.memory_used_mib[index] = (unsigned long long)v;
            return NULL;
        }
        if (strcmp(key + consumed, "handle_type_fabric") == 0) {
            if (parse_number(value, 0, 1, &v) != 0) return "handle_type_fabric must be 0 (unsupported) or 1 (default)";
            config.no_fabric_handles[index] = v == 0;
            return NULL;
        }
        if (strcmp(key + consumed, "mig") == 0) {
            if (parse_number(value, 0, 1, &v) != 0) return "mig must be 0 (off) or 1 (on)";
            config.mig[index] = (int)v;
            return NULL;
        }
        /* EXCLUSIVE_THREAD (1) is "Support Removed" in nvml.h: not accepted. */
        if (parse_number(value, 0, 3, &v) != 0 || v == 1)
            return "compute_mode must be 0 (DEFAULT), 2 (PROHIBITED) or 3 (EXCLUSIVE_PROCESS)";
        config.compute_mode[index] = (int)v;
        return NULL;
    }
    index = -1;
    consumed = 0;
    if (sscanf(key, "gpu.%d.fabric.%n", &index, &consumed) != 1 || consumed == 0) return "unknown key";
    if (index < 0 || index >= FAKE_MAX_GPUS) return "GPU index must be 0..63";
    const char *field = key + consumed;
    struct fake_fabric *f = &config.fabric[index];
    if (strcmp(field, "state") == 0) {
        if (parse_number(value, 0, 3, &v) != 0) return "fabric state must be 0..3";
        f->state = (int)v;
    } else if (strcmp(field, "status") == 0) {
        if (parse_number(value, 0, INT_MAX, &v) != 0) return "fabric status must be an nvmlReturn_t (0..)";
        f->status = (int)v;
        status_set[index] = 1;
    } else if (strcmp(field, "clique") == 0) {
        if (parse_number(value, 0, UINT_MAX, &v) != 0) return "fabric clique must be an unsigned int";
        f->clique = (unsigned int)v;
    } else if (strcmp(field, "cluster") == 0) {
        if (fake_parse_uuid(value, f->cluster) != 0) return "fabric cluster must be a UUID xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
    } else if (strcmp(field, "health") == 0) {
        if (parse_number(value, 0, UINT_MAX, &v) != 0) return "fabric health must be an unsigned int (healthMask)";
        f->health = (unsigned int)v;
    } else if (strcmp(field, "summary") == 0) {
        if (parse_number(value, 0, 3, &v) != 0) return "fabric summary must be 0..3";
        f->summary = (int)v;
    } else {
        return "unknown fabric field (state, status, clique, cluster, health, summary)";
    }
    return NULL;
}

static void read_config_file(const char *path, int status_set[FAKE_MAX_GPUS]) {
    FILE *f = fopen(path, "re");
    if (!f) {
        fake_log("cannot read FAKECUDA_CONFIG %s: %s; using defaults", path, strerror(errno));
        return;
    }
    char *line = NULL;
    size_t cap = 0;
    int number = 0;
    while (getline(&line, &cap, f) >= 0) {
        number++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *text = trim(line);
        if (!*text) continue;
        char *eq = strchr(text, '=');
        if (!eq) {
            fake_log("%s:%d: ignored, not key=value: %s", path, number, text);
            continue;
        }
        *eq = '\0';
        char *key = trim(text);
        char *value = trim(eq + 1);
        const char *why = apply_config(key, value, status_set);
        if (why) fake_log("%s:%d: ignored %s=%s: %s", path, number, key, value, why);
    }
    free(line);
    fclose(f);
}

static void load_config(void) {
    int status_set[FAKE_MAX_GPUS] = {0};
    config.gpus = 1;
    const char *gpus = getenv("FAKECUDA_GPUS");
    long long v;
    if (gpus && *gpus) {
        if (parse_number(gpus, 0, FAKE_MAX_GPUS, &v) == 0)
            config.gpus = (int)v;
        else
            fake_log("FAKECUDA_GPUS=%s ignored: must be 0..64", gpus);
    }
    default_host(config.host, sizeof config.host);

    const char *tmp = getenv("TMPDIR");
    char state_default[4096];
    snprintf(state_default, sizeof state_default, "%s/fakecuda-state", tmp && *tmp ? tmp : "/tmp");
    copy_env_dir(config.state_dir, sizeof config.state_dir, "FAKECUDA_STATE_DIR", state_default);
    copy_env_dir(config.channel_dir, sizeof config.channel_dir, "FAKECUDA_CHANNEL_DIR", "/dev/nvidia-caps-imex-channels");
    copy_env_dir(config.dev_dir, sizeof config.dev_dir, "FAKECUDA_DEV_DIR", "");

    const char *faults = getenv("FAKECUDA_FAULTS");
    if (faults && strlen(faults) >= sizeof config.faults)
        fake_log("FAKECUDA_FAULTS is longer than %zu bytes and ignored; use the @file form", sizeof config.faults - 1);
    else if (faults)
        snprintf(config.faults, sizeof config.faults, "%s", faults);

    const char *path = getenv("FAKECUDA_CONFIG");
    if (path && *path) read_config_file(path, status_set);

    /* Measured on the H200 (docs/gpu-validation.md, 2026-12-02): state NOT_SUPPORTED comes with status
     * NVML_SUCCESS (0) from nvmlDeviceGetGpuFabricInfoV v3; the status means something only once COMPLETED. */
    for (int i = 0; i < FAKE_MAX_GPUS; i++)
        if (!status_set[i]) config.fabric[i].status = 0;
}

const struct fake_config *fake_config(void) {
    pthread_once(&config_once, load_config);
    return &config;
}

/* ---- GPU identity and presence ---------------------------------------------------------------------- */

void fake_gpu_uuid(const char *host, int physical, unsigned char out[16]) {
    char key[FAKE_HOST_MAX + 32];
    int len = snprintf(key, sizeof key, "fakecuda-gpu/%s/%d", host, physical);
    unsigned long long a = fake_hash64(key, (size_t)len, 0x9e3779b97f4a7c15ULL);
    unsigned long long b = fake_hash64(key, (size_t)len, 0xc2b2ae3d27d4eb4fULL);
    for (int i = 0; i < 8; i++) {
        out[i] = (unsigned char)(a >> (56 - 8 * i));
        out[8 + i] = (unsigned char)(b >> (56 - 8 * i));
    }
}

void fake_format_uuid(const unsigned char u[16], char out[FAKE_UUID_STRING_LEN]) {
    snprintf(out, FAKE_UUID_STRING_LEN,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
             u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

int fake_parse_uuid(const char *text, unsigned char out[16]) {
    if (!text || strlen(text) != 36) return -1;
    int byte = 0;
    for (int i = 0; i < 36;) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (text[i] != '-') return -1;
            i++;
            continue;
        }
        if (!isxdigit((unsigned char)text[i]) || !isxdigit((unsigned char)text[i + 1])) return -1;
        char pair[3] = {text[i], text[i + 1], '\0'};
        out[byte++] = (unsigned char)strtoul(pair, NULL, 16);
        i += 2;
    }
    return byte == 16 ? 0 : -1;
}

int fake_present_gpus(int physical[FAKE_MAX_GPUS]) {
    const struct fake_config *c = fake_config();
    int n = 0;
    for (int i = 0; i < c->gpus; i++) {
        if (c->dev_dir[0]) {
            /* A container runtime exposes only the /dev/nvidiaN of the GPUs it grants. */
            char path[4200];
            snprintf(path, sizeof path, "%.4095s/nvidia%d", c->dev_dir, i);
            if (access(path, F_OK) != 0) continue;
        }
        physical[n++] = i;
    }
    return n;
}

/* ---- IMEX channels ---------------------------------------------------------------------------------- */

/* "channelN" with N in 0..2047 written without leading zeros, else -1. */
static int channel_number(const char *name) {
    if (strncmp(name, "channel", 7) != 0) return -1;
    const char *digits = name + 7;
    size_t len = strlen(digits);
    if (len == 0 || len > 4 || (len > 1 && digits[0] == '0')) return -1;
    int n = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)digits[i])) return -1;
        n = n * 10 + (digits[i] - '0');
    }
    return n <= FAKE_MAX_CHANNEL ? n : -1;
}

/* The driver opens the channel device; a process that cannot (hidden directory, device cgroup, mode bits)
 * has no channel. A char node made by mknod in CI has no driver behind it (ENXIO/ENODEV on open): there,
 * read permission is what counts. */
static int channel_accessible(int dirfd, const char *name) {
    struct stat st;
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd >= 0) {
        int ok = fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISCHR(st.st_mode));
        close(fd);
        return ok;
    }
    if (errno == ENXIO || errno == ENODEV)
        return fstatat(dirfd, name, &st, 0) == 0 && S_ISCHR(st.st_mode) && faccessat(dirfd, name, R_OK, AT_EACCESS) == 0;
    return 0;
}

int fake_lowest_channel(void) {
    DIR *dir = opendir(fake_config()->channel_dir);
    if (!dir) return -1;
    int best = -1;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        int n = channel_number(entry->d_name);
        if (n < 0 || (best >= 0 && n >= best)) continue;
        if (channel_accessible(dirfd(dir), entry->d_name)) best = n;
    }
    closedir(dir);
    return best;
}

int fake_has_channel(int n) {
    if (n < 0 || n > FAKE_MAX_CHANNEL) return 0;
    int dirfd = open(fake_config()->channel_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) return 0;
    char name[32];
    snprintf(name, sizeof name, "channel%d", n);
    int ok = channel_accessible(dirfd, name);
    close(dirfd);
    return ok;
}

/* ---- state directory -------------------------------------------------------------------------------- */

int fake_ensure_state_dir(void) {
    char path[sizeof config.state_dir];
    memcpy(path, fake_config()->state_dir, sizeof path);
    /* mkdir -p: each missing component is created 0700 (the allocation files are capabilities). */
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            fake_log("cannot create state directory %s: %s", path, strerror(errno));
            return -1;
        }
        *p = saved;
        if (saved == '\0') break;
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fake_log("state directory %s is not a directory", path);
        return -1;
    }
    return 0;
}

/* ---- faults ----------------------------------------------------------------------------------------- */

enum fault_kind { FAULT_NONE, FAULT_CODE, FAULT_DELAY, FAULT_HANG };

struct fault {
    enum fault_kind kind;
    long long value; /* the code, or the delay in ms */
};

/* A malformed spec is reported once per distinct text (per source), not on every call. */
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long reported_hash[2];

static int should_report(int from_file, const char *spec) {
    unsigned long long h = fake_hash64(spec, strlen(spec), 0) | 1; /* never 0, the initial value */
    pthread_mutex_lock(&report_lock);
    int fresh = reported_hash[from_file] != h;
    reported_hash[from_file] = h;
    pthread_mutex_unlock(&report_lock);
    return fresh;
}

static int parse_fault_value(const char *value, struct fault *out) {
    long long v;
    if (strcmp(value, "hang") == 0) {
        out->kind = FAULT_HANG;
        out->value = 0;
        return 0;
    }
    if (strncmp(value, "delay:", 6) == 0) {
        if (parse_number(value + 6, 0, 3600000, &v) != 0) return -1;
        out->kind = FAULT_DELAY;
        out->value = v;
        return 0;
    }
    /* 0 would be success without the work being done: invented success, so it is refused. */
    if (parse_number(value, 1, INT_MAX, &v) != 0) return -1;
    out->kind = FAULT_CODE;
    out->value = v;
    return 0;
}

/* The first well-formed item naming entry. Items: comma- or newline-separated name=value; '#' starts a
 * comment item in a fault file. */
static struct fault fault_lookup(const char *spec, const char *entry, int from_file) {
    struct fault found = {FAULT_NONE, 0};
    int report = -1; /* decided lazily: most specs are well-formed */
    const char *p = spec;
    while (*p) {
        size_t len = strcspn(p, ",\n\r");
        char item[512];
        if (len >= sizeof item) {
            if (report < 0) report = should_report(from_file, spec);
            if (report) fake_log("FAKECUDA_FAULTS item too long, ignored");
        } else {
            memcpy(item, p, len);
            item[len] = '\0';
            char shown[512];
            memcpy(shown, item, len + 1); /* for the message: parsing cuts item up */
            char *text = trim(item);
            if (*text && *text != '#') {
                char *eq = strchr(text, '=');
                struct fault f;
                int ok = eq != NULL;
                if (ok) {
                    *eq = '\0';
                    char *name = trim(text);
                    ok = *name && strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(name) &&
                         parse_fault_value(trim(eq + 1), &f) == 0;
                    if (ok && found.kind == FAULT_NONE && strcmp(name, entry) == 0) found = f;
                }
                if (!ok) {
                    if (report < 0) report = should_report(from_file, spec);
                    if (report)
                        fake_log("FAKECUDA_FAULTS item '%s' ignored: expected entryPoint=code (1..), "
                                 "entryPoint=delay:MS or entryPoint=hang", trim(shown));
                }
            }
        }
        p += len;
        if (*p) p++;
    }
    return found;
}

static void sleep_ms(long long ms) {
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Reads a fault file; a missing file means no faults (a test creates it when it wants one). */
static int read_fault_file(const char *path, char *buf, size_t cap) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t used = 0;
    while (used + 1 < cap) {
        ssize_t got = read(fd, buf + used, cap - 1 - used);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        used += (size_t)got;
    }
    close(fd);
    buf[used] = '\0';
    return 0;
}

int fake_fault(const char *entry) {
    const char *spec = fake_config()->faults;
    if (!spec[0]) return 0;
    int from_file = spec[0] == '@';
    for (;;) {
        char text[16384];
        const char *current = spec;
        if (from_file) {
            if (read_fault_file(spec + 1, text, sizeof text) != 0) return 0;
            current = text;
        }
        struct fault f = fault_lookup(current, entry, from_file);
        switch (f.kind) {
        case FAULT_NONE:
            return 0;
        case FAULT_CODE:
            return (int)f.value;
        case FAULT_DELAY:
            sleep_ms(f.value);
            return 0;
        case FAULT_HANG:
            /* From a file: re-read until the hang is gone. From the environment: for ever, like a real hang. */
            sleep_ms(10);
            break;
        }
    }
}
