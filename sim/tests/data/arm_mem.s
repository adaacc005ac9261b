@ Instructions used by sim/tests/arm_mem.rs (one per line, each at its own address).
@ Assembled with: arm-none-eabi-as -mcpu=xscale (ARMv5TE + XScale); encodings read back with
@ arm-none-eabi-objdump -d. Lines with .inst are encodings gas refuses (UNPREDICTABLE forms),
@ hand-derived from the valid form named in the comment.
	.arm
	.syntax unified
	str r0, [r1, #4]!
	ldr r2, [r1], #-4
	ldr r3, [r1, #8]
	ldr r5, [r1, r4, lsl #2]
	ldr r5, [r6, -r4, asr #2]!
	ldrb r5, [r1, r4, rrx]
	strb r0, [r1, #3]
	ldrt r7, [r1], #4
	strbt r0, [r1], #1
	ldr r0, [pc, #-4]
	ldr r0, [r1]
	str r0, [r1]
	ldrsb r0, [r1, #2]
	ldrsb r0, [r1, #3]
	ldrsh r0, [r1]
	ldrh r0, [r1]
	ldrsh r0, [r1, #4]
	ldrh r0, [r1, r2]
	ldrh r0, [r1], #2
	ldrsh r0, [r1, #-2]!
	strh r0, [r1, #6]
	ldrd r2, [r1, #8]
	strd r4, [r1, #-8]!
	ldrd r6, [r1], -r0
	.inst 0xe1c130d8 @ ldrd r3, [r1, #8] (from ldrd r2, [r1, #8] = 0xe1c120d8)
	.inst 0xe1c1e0d8 @ ldrd lr, [r1, #8]
	stmdb r0!, {r1, r2, r3}
	ldmia r0, {r4, r5, r6}
	ldmib r0!, {r7, r8}
	ldmda r0!, {r9, r10}
	stmib r0, {r1, r2}
	stmda r0, {r1, r2}
	push {r0, r1, lr}
	pop {r2, r3, pc}
	ldr pc, [sp], #4
	ldr pc, [r0, #4]
	.inst 0xe5d0f000 @ ldrb pc, [r0] (gas refuses; ldrb r1, [r0] = 0xe5d01000)
	.inst 0xe1d0f0b0 @ ldrh pc, [r0] (gas refuses; ldrh r1, [r0] = 0xe1d010b0)
	.inst 0xe1d0f0d0 @ ldrsb pc, [r0]
	.inst 0xe4b0f004 @ ldrt pc, [r0], #4
	str pc, [r0]
	stmia r0, {r0, pc}
	stmia r1!, {r1, r2}
	stmia r2!, {r1, r2}
	stmia r2, {r1, r2}
	ldmia r1!, {r0, r1, r2}
	.inst 0xe8900000 @ ldmia r0, {} (from ldmia r0, {r1} = 0xe8900002)
	.inst 0xe8800000 @ stmia r0, {}
	stmia r0, {sp, lr}^
	ldmia r0, {sp, lr}^
	ldmfd sp!, {r0, pc}^
	swp r1, r0, [r2]
	swpb r0, r0, [r2]
	.inst 0xe1022090 @ swp r2, r0, [r2] (from swp r1, r0, [r2] = 0xe1021090)
	pld [r1, #4]
	pld [r1, -r2, lsl #2]
	ldr r0, [r1, #8]
	mov r0, #0
	strh r0, [r1]
	ldmia r0!, {r1, r2, r3}
	ldrd r2, [r0], #8
