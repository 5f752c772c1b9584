/*
 * The driver floor inside a JVM: bench/driver_floor.c's main, built into a JNI library (bench/build-floor.sh with
 * an OUTPUT ending in .so) and run by dev.imexprobe.bench.FloorInJvm on the JVM's main thread. The exporter's calls
 * then come from a JVM process (its heap, code cache and threads beside them) and the importer's from a fork of
 * it, with the floor's own C loop and no JNI call per driver call. It asks whether the agents' driver calls are
 * slower than the floor's because of the process they run in (docs/performance.md).
 */
#include <jni.h>
#include <stdlib.h>
#include <string.h>

int imexprobe_floor_main(int argc, char **argv);

JNIEXPORT jint JNICALL Java_dev_imexprobe_bench_FloorInJvm_run(JNIEnv *env, jclass cls, jobjectArray args) {
    jsize n = args ? (*env)->GetArrayLength(env, args) : 0;
    char **argv = calloc((size_t)n + 2, sizeof(char *));
    if (!argv) return 1;
    argv[0] = "driver_floor";
    int rc = 0;
    for (jsize i = 0; i < n && rc == 0; i++) {
        jstring s = (jstring)(*env)->GetObjectArrayElement(env, args, i);
        const char *utf = s ? (*env)->GetStringUTFChars(env, s, NULL) : NULL;
        argv[i + 1] = strdup(utf ? utf : "");
        if (utf) (*env)->ReleaseStringUTFChars(env, s, utf);
        if (s) (*env)->DeleteLocalRef(env, s);
        if (!argv[i + 1]) rc = 1;
    }
    if (rc == 0) rc = imexprobe_floor_main((int)n + 1, argv);
    for (jsize i = 0; i < n; i++) free(argv[i + 1]);
    free(argv);
    return rc;
}
