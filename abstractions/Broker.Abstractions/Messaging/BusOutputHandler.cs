using System.Buffers;

namespace Broker.Abstractions;

/// <summary>
/// Encodes a message delivered to an output subscription of an <see cref="IBusConnection"/> into the connection's
/// output. Runs on the producer's thread under the connection's output lock: it must not block and must not call the bus.
/// </summary>
/// <param name="message">The message; its memory is valid only during the call.</param>
/// <param name="output">Where to write; valid only during the call, and never flushed by the handler.</param>
public delegate void BusOutputHandler(in BusMessage message, IBufferWriter<byte> output);

/// <summary>Writes an adapter's own bytes into its connection's output (<see cref="IBusConnection.WriteOutput{TState}"/>).</summary>
/// <typeparam name="TState">The state passed through.</typeparam>
/// <param name="output">Where to write; valid only during the call.</param>
/// <param name="state">The state given to <see cref="IBusConnection.WriteOutput{TState}"/>.</param>
public delegate void BusOutputWriter<in TState>(IBufferWriter<byte> output, TState state);
