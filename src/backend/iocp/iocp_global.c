/* iocp_global.c — process-wide set-up: the refcounted WSAStartup, the ntdll
 * status translation, and the backend's name. */
#include "iocp.h"

static SRWLOCK global_lock = SRWLOCK_INIT;
static int global_refs;

int zl_backend_global_init(void)
{
    int err = 0;
    AcquireSRWLockExclusive(&global_lock);
    if (global_refs == 0) {
        WSADATA data;
        int rc = WSAStartup(MAKEWORD(2, 2), &data);
        if (rc != 0)
            err = zl_iocp_errno_from_wsa(rc);
    }
    if (err == 0)
        global_refs++;
    ReleaseSRWLockExclusive(&global_lock);
    return err;
}

void zl_backend_global_term(void)
{
    AcquireSRWLockExclusive(&global_lock);
    if (global_refs > 0 && --global_refs == 0)
        WSACleanup();
    ReleaseSRWLockExclusive(&global_lock);
}

const char *zl_backend_name(void)
{
    return "iocp";
}

static INIT_ONCE ipc_once = INIT_ONCE_STATIC_INIT;
static int has_ipc;

static BOOL CALLBACK probe_af_unix(PINIT_ONCE once, PVOID param, PVOID *context)
{
    (void)once;
    (void)param;
    (void)context;
    /* Windows 10 1803 added AF_UNIX; before it, and under Wine 8, socket()
     * fails with WSAEAFNOSUPPORT. Asked of the system, not of its version
     * number, so a Wine that gains AF_UNIX runs the ipc tests. */
    WSADATA data;
    if (WSAStartup(MAKEWORD(2, 2), &data) != 0)
        return TRUE;
    SOCKET s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s != INVALID_SOCKET) {
        has_ipc = 1;
        closesocket(s);
    }
    WSACleanup();
    return TRUE;
}

int zl_backend_has_ipc(void)
{
    InitOnceExecuteOnce(&ipc_once, probe_af_unix, NULL, NULL);
    return has_ipc;
}

typedef ULONG(WINAPI *ntstatus_to_win32_fn)(LONG);

static INIT_ONCE ntdll_once = INIT_ONCE_STATIC_INIT;
static ntstatus_to_win32_fn ntstatus_to_win32;

static BOOL CALLBACK load_ntdll(PINIT_ONCE once, PVOID param, PVOID *context)
{
    (void)once;
    (void)param;
    (void)context;
    /* ntdll is mapped into every process; looking the function up avoids
     * linking ntdll's import library. */
    HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
    if (ntdll != NULL)
        ntstatus_to_win32 = (ntstatus_to_win32_fn)(void (*)(
            void))GetProcAddress(ntdll, "RtlNtStatusToDosError");
    return TRUE;
}

/* A completed OVERLAPPED holds an NTSTATUS. WSAGetOverlappedResult would
 * translate it, but fails with WSAENOTSOCK once the socket is closed, which
 * is exactly when cancelled completions arrive. */
ULONG zl_iocp_ntstatus_to_win32(LONG status)
{
    InitOnceExecuteOnce(&ntdll_once, load_ntdll, NULL, NULL);
    if (ntstatus_to_win32 != NULL)
        return ntstatus_to_win32(status);
    return (ULONG)status == 0xC0000120u /* STATUS_CANCELLED */
               ? ERROR_OPERATION_ABORTED
               : ERROR_GEN_FAILURE;
}
