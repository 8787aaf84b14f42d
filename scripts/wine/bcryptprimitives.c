/* Rust's standard library on Windows draws random bytes from ProcessPrng in
 * bcryptprimitives.dll, which wine before 9.0 does not ship. scripts/cross-check builds this
 * stand-in beside the test binaries when the installed wine lacks it; it draws them from
 * RtlGenRandom (advapi32's SystemFunction036), which every wine has. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
