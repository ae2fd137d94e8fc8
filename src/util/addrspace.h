/* SPDX-License-Identifier: MIT */
/*
 * The x86-64 address-space split (4-level paging; 5-level keeps the same
 * halves at the ends): user addresses are below USER_ADDR_END, kernel
 * addresses at or above KERNEL_ADDR_START. An ip whose mode a record does
 * not say (a call-chain entry) is classified by these alone.
 */
#ifndef DOMPROF_UTIL_ADDRSPACE_H
#define DOMPROF_UTIL_ADDRSPACE_H

#define USER_ADDR_END     0x0000800000000000ull
#define KERNEL_ADDR_START 0xffff800000000000ull

#endif
