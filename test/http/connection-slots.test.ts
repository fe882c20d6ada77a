import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { describe, test } from 'node:test'
import { ConnectionSlots, SEARCH_AGAIN_AFTER_MS, type ConnectionState } from '../../src/http/connection-slots.ts'

/** A connection as the slots see it: an address, a state, and a close that the slots' caller performs. */
class FakeSocket extends EventEmitter {
  state: ConnectionState = 'silent'
  readonly name: string
  readonly remoteAddress: string
  constructor (name: string, remoteAddress: string) {
    super()
    this.name = name
    this.remoteAddress = remoteAddress
  }
}

function slotsFor (capacity: number, share: number) {
  const closed: string[] = []
  const slots = new ConnectionSlots<FakeSocket>({
    capacity,
    share,
    addressOf: (peer) => peer,
    stateOf: (socket) => socket.state,
    close (socket, state) {
      closed.push(`${socket.name} (${state})`)
      socket.emit('close')
    }
  })
  // The clock the slots are given: each connection comes a millisecond after the last.
  let clock = 0
  const open = (name: string, address: string, state: ConnectionState = 'busy', at = ++clock) => {
    const socket = new FakeSocket(name, address)
    const admitted = slots.admit(socket, at)
    // A new connection is silent until it sends; the test then says what it is doing.
    socket.state = state
    return { socket, admitted }
  }
  return { slots, closed, open, later: (ms: number) => { clock += ms } }
}

describe('connection slots', () => {
  test('while there is room every connection gets a slot, whatever its address holds', () => {
    const { slots, closed, open } = slotsFor(600, 32)
    const admitted = Array.from({ length: 500 }, (_, i) => open(`a${i}`, 'A').admitted)
    assert.deepEqual([admitted.every(Boolean), slots.held, closed], [true, 500, []])
  })

  test('when full, a newcomer takes a connection that is not busy: silent ones of heavier addresses, then receiving, then idle, the heaviest address\'s first, the oldest first', () => {
    const { slots, closed, open, later } = slotsFor(9, 32)
    open('a1', 'A', 'idle')
    open('a2', 'A', 'receiving')
    open('a3', 'A', 'silent')
    open('a4', 'A', 'silent')
    open('a5', 'A', 'busy')
    open('b1', 'B', 'idle')
    open('b2', 'B', 'silent')
    open('b3', 'B', 'silent')
    open('c1', 'C', 'busy')
    later(1000)
    const taken = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7'].map((name) => open(name, 'N').admitted)
    assert.deepEqual(taken, [true, true, true, true, true, true, false])
    // Once N holds 3, no address holds more: B's last silent connection (b3) stays, and the
    // receiving and idle ones go, the heaviest address's first. Then only busy ones and b3 are left.
    assert.deepEqual(closed, ['a3 (silent)', 'a4 (silent)', 'b2 (silent)', 'a2 (receiving)', 'a1 (idle)', 'b1 (idle)'])
    assert.equal(slots.held, 9)
  })

  test('a silent connection is not taken within its first second, nor by an address holding as many', () => {
    const { closed, open, later } = slotsFor(3, 32)
    open('a1', 'A', 'silent')
    open('b1', 'B', 'silent')
    open('b2', 'B', 'silent')
    assert.equal(open('n1', 'N').admitted, false, 'every connection came less than a second ago')
    later(1000)
    assert.equal(open('a2', 'A').admitted, true, 'B holds more than A')
    assert.equal(open('a3', 'A').admitted, false, 'A and B hold as many')
    assert.deepEqual(closed, ['b1 (silent)'])
  })

  test('busy connections are never taken: with every slot busy, the newcomer is refused and holds no slot', () => {
    const { slots, closed, open } = slotsFor(3, 32)
    open('a1', 'A')
    open('a2', 'A')
    open('b1', 'B')
    assert.deepEqual([open('n1', 'N').admitted, closed, slots.held], [false, [], 3])
  })

  test('an address holding its share takes only its own connections that are not silent when full, and is refused when there are none', () => {
    const { closed, open, later } = slotsFor(7, 3)
    open('a1', 'A', 'idle')
    open('a2', 'A', 'silent')
    open('a3', 'A', 'busy')
    open('b1', 'B', 'idle')
    open('b2', 'B', 'idle')
    open('b3', 'B', 'silent')
    open('b4', 'B', 'receiving')
    later(1000)
    assert.equal(open('a4', 'A').admitted, true)
    assert.deepEqual(closed, ['a1 (idle)'], 'A took its own idle connection, not one of B\'s')
    assert.equal(open('a5', 'A').admitted, false, 'A\'s others are silent or busy')
    assert.deepEqual(closed, ['a1 (idle)'])
  })

  test('a newcomer below its share takes idle connections from the heaviest address, its own when that is itself', () => {
    const { closed, open } = slotsFor(4, 32)
    open('a1', 'A', 'idle')
    open('b1', 'B', 'idle')
    open('n1', 'N', 'idle')
    open('n2', 'N', 'busy')
    assert.equal(open('n3', 'N').admitted, true)
    assert.deepEqual(closed, ['n1 (idle)'])
  })

  test('MAX_CONNECTIONS_PER_ADDRESS=0: no share, the heaviest address is taken from first', () => {
    const { closed, open } = slotsFor(3, 0)
    open('a1', 'A', 'idle')
    open('a2', 'A', 'idle')
    open('b1', 'B', 'idle')
    assert.equal(open('a3', 'A').admitted, true)
    assert.deepEqual(closed, ['a1 (idle)'])
  })

  test('after a search that found nothing to take, newcomers are refused without a search for SEARCH_AGAIN_AFTER_MS', () => {
    const { closed, open, later } = slotsFor(1, 32)
    const { socket } = open('a1', 'A')
    assert.equal(open('n1', 'N').admitted, false)
    socket.state = 'idle'
    assert.equal(open('n2', 'N').admitted, false, 'within the pause: no search')
    later(SEARCH_AGAIN_AFTER_MS)
    assert.equal(open('n3', 'N').admitted, true)
    assert.deepEqual(closed, ['a1 (idle)'])
  })

  test('a slot is given back when its connection closes', () => {
    const { slots, closed, open } = slotsFor(2, 32)
    const { socket } = open('a1', 'A')
    open('a2', 'A')
    assert.equal(open('b1', 'B').admitted, false)
    socket.emit('close')
    assert.deepEqual([open('b2', 'B').admitted, slots.held, closed], [true, 2, []])
  })
})
