/* names.c - names of categories, stages, exit reasons and owner kinds, and their parsers. */
#include "models.h"

#include <string.h>

static const char *const category_names[MDL_CAT_COUNT] = {"java", "native", "gpu", "file"};
static const char *const stage_names[MDL_STAGE_COUNT] = {
    "download", "load", "runtime_prepare", "delegate_prepare",
    "inference", "cache", "release", "exit", "app_start", "page"};
static const char *const exit_names[MDL_EXIT_COUNT] = {
    "low_memory", "java_crash", "native_crash", "anr", "system_reclaim", "watchdog"};
static const char *const owner_names[MDL_OWNER_KIND_COUNT] = {"part", "session", "request",
                                                              "cache", "leaked", "app"};

const char *mdl_category_name(mdl_category c)
{
    return (unsigned)c < MDL_CAT_COUNT ? category_names[c] : "?";
}

const char *mdl_stage_name(mdl_stage s)
{
    return (unsigned)s < MDL_STAGE_COUNT ? stage_names[s] : "?";
}

const char *mdl_owner_kind_name(mdl_owner_kind k)
{
    return (unsigned)k < MDL_OWNER_KIND_COUNT ? owner_names[k] : "?";
}

const char *mdl_exit_name(mdl_exit x)
{
    return (unsigned)x < MDL_EXIT_COUNT ? exit_names[x] : "?";
}

/* Index of s[0..len) in names[0..n), or -1. */
static int find_name(const char *const *names, int n, const char *s, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0)
            return i;
    return -1;
}

int mdl_category_parse(const char *s, size_t len, mdl_category *out)
{
    int i = find_name(category_names, MDL_CAT_COUNT, s, len);
    if (i < 0)
        return SIM_ENOTFOUND;
    *out = (mdl_category)i;
    return SIM_OK;
}

int mdl_stage_parse(const char *s, size_t len, mdl_stage *out)
{
    int i = find_name(stage_names, MDL_STAGE_COUNT, s, len);
    if (i < 0)
        return SIM_ENOTFOUND;
    *out = (mdl_stage)i;
    return SIM_OK;
}

static const char *const action_names[MDL_ACT_COUNT] = {
    "reject_new",   "stop_prewarm", "reduce_concurrency", "release_idle",
    "clear_rebuildable_cache", "degrade_cpu", "fallback_lkg"};

const char *mdl_action_name(mdl_action a)
{
    return (unsigned)a < MDL_ACT_COUNT ? action_names[a] : "?";
}

int mdl_action_parse(const char *s, mdl_action *out)
{
    int i = find_name(action_names, MDL_ACT_COUNT, s, strlen(s));
    if (i < 0)
        return SIM_ENOTFOUND;
    *out = (mdl_action)i;
    return SIM_OK;
}

static const char *const recovery_names[] = {"naive", "safe_mode", "fallback_lkg", "ladder"};

const char *mdl_recovery_name(mdl_recovery r)
{
    return (unsigned)r <= MDL_RECOVERY_LADDER ? recovery_names[r] : "?";
}

static const char *const record_names[MDL_REC_KIND_COUNT] = {
    "exit_info", "jetsam", "jetsam_pageshortage", "watchdog", "crash", "jetsam_system",
    "metrickit_background"};

const char *mdl_field_metric_name(mdl_field_metric m)
{
    static const char *const names[MDL_FIELD_METRICS] = {"lmk_rate", "memory_exit_rate"};
    return (unsigned)m < MDL_FIELD_METRICS ? names[m] : "?";
}

const char *mdl_record_kind_name(mdl_record_kind k)
{
    return (unsigned)k < MDL_REC_KIND_COUNT ? record_names[k] : "?";
}

static const char *const text_names[MDL_TEXT_COUNT] = {
    "",
    "scene-create watchdog transgression (0x8badf00d)",
    "EXC_BAD_ACCESS (SIGSEGV) in the delegate",
    "jetsam: vm-pageshortage",
    "jetsam: per-process-limit",
    "crash: java.lang.OutOfMemoryError",
    "crash_native: signal 6 (SIGABRT) in the delegate",
    "anr: Input dispatching timed out",
    "low memory: lmkd kill",
    "signaled: 9 (no low-memory reporting)",
    "jetsam: system memory health",
    "anr: executing service",
    "MetricKit: cumulativeMemoryPressureExitCount (no JetsamEvent)"};

const char *mdl_record_text_name(mdl_record_text t)
{
    return (unsigned)t < MDL_TEXT_COUNT ? text_names[t] : "?";
}

/* ApplicationExitInfo.REASON_* names (docs/model.md "Exit records"). */
const char *mdl_aei_reason_name(int reason)
{
    static const char *const names[] = {
        "UNKNOWN",        "EXIT_SELF",          "SIGNALED",      "LOW_MEMORY",
        "CRASH",          "CRASH_NATIVE",       "ANR",           "INITIALIZATION_FAILURE",
        "PERMISSION_CHANGE", "EXCESSIVE_RESOURCE_USAGE", "USER_REQUESTED", "USER_STOPPED",
        "DEPENDENCY_DIED", "OTHER",             "FREEZER",       "PACKAGE_STATE_CHANGE",
        "PACKAGE_UPDATED"};
    return reason >= 0 && (size_t)reason < sizeof names / sizeof *names ? names[reason] : "?";
}

/* ---------------------------------------------------------- provenance */

/* The phone figures a capture can measure, each a key (or key.part) of the
 * profile (docs/devices.md says how to measure each). */
static const char *const android_values[] = {
    "ram", "system", "cached_apps", "cached_app_size", "pressure", "pressure_size",
    "kill.watermarks", "kill.minfree", "lmkd", "java_heap_limit", "warning_at", "speed",
    "delegates", "successor", "zram.size", "zram.ratio", "page_cache.size",
    "page_cache.working_set", "storage_read", "reclaim_rate", "swappiness", "exit_info"};
static const char *const ios_values[] = {
    "ram", "system", "kill.limit", "warning_at", "pageshortage", "others", "compressor.ratio",
    "page_cache.size", "page_cache.working_set", "storage_read", "speed", "delegates",
    "successor"};

const char *const *mdl_device_values(mdl_os os, unsigned *n)
{
    if (os == MDL_OS_IOS) {
        *n = sizeof ios_values / sizeof *ios_values;
        return ios_values;
    }
    *n = sizeof android_values / sizeof *android_values;
    return android_values;
}

int mdl_device_value_in_force(const mdl_device *d, unsigned k)
{
    unsigned n;
    const char *const *v = mdl_device_values(d->os, &n);
    if (k >= n)
        return 0;
    if (d->os == MDL_OS_ANDROID && strcmp(v[k], "kill.minfree") == 0)
        return !d->lmk_psi;
    if (d->os == MDL_OS_ANDROID && strcmp(v[k], "kill.watermarks") == 0)
        return d->lmk_psi;
    return 1;
}

const char *mdl_device_source(const mdl_device *d, unsigned k, int *fitted)
{
    for (unsigned i = 0; d->measured != NULL && i < d->measured->n; i++)
        if (d->measured->value[i] == k) {
            if (fitted != NULL)
                *fitted = d->measured->fitted[i];
            return d->measured->src[i];
        }
    return NULL;
}

const char *mdl_device_source_in_force(const mdl_device *d, unsigned k, int *fitted)
{
    return mdl_device_value_in_force(d, k) ? mdl_device_source(d, k, fitted) : NULL;
}

/* Android's PowerManager.THERMAL_STATUS_NONE to _CRITICAL; iOS's
 * ProcessInfo.ThermalState, nominal to critical (docs/model.md). */
const char *mdl_thermal_name(mdl_os os, unsigned k)
{
    static const char *const android[] = {"none", "light", "moderate", "severe", "critical"};
    static const char *const ios[] = {"nominal", "fair", "serious", "critical"};
    if (os == MDL_OS_IOS)
        return k < 4 ? ios[k] : "?";
    return k < 5 ? android[k] : "?";
}
