/* SPDX-License-Identifier: MIT */
/*
 * The x86-64 address-space split. With 4-level paging user addresses are
 * below USER_ADDR_END and kernel addresses at or above KERNEL_ADDR_START
 * (48-bit canonical halves). With 5-level paging (LA57) both halves grow
 * to 57 bits: the kernel half starts at KERNEL_ADDR_START_LA57, where the
 * kernel's data lives (its direct map, vmalloc'd stacks, per-CPU areas),
 * while its code (image, modules) stays in the top 2 GiB, above
 * KERNEL_ADDR_START in both modes; user addresses above USER_ADDR_END
 * exist only where a program asked mmap for them. An ip whose mode a
 * record does not say (a call-chain entry) is classified by
 * USER_ADDR_END / KERNEL_ADDR_START alone: code addresses.
 */
#ifndef DOMPROF_UTIL_ADDRSPACE_H
#define DOMPROF_UTIL_ADDRSPACE_H

#define USER_ADDR_END          0x0000800000000000ull
#define KERNEL_ADDR_START      0xffff800000000000ull
#define KERNEL_ADDR_START_LA57 0xff00000000000000ull

#endif
