namespace Broker.Mqtt.Tests.Mqtt5;

/// <summary>Reads the MQTT 5 properties of packets a raw client received.</summary>
public static class Mqtt5Properties
{
    /// <summary>A two- or four-byte integer property of a property block (its length, then the properties); 0 when absent.</summary>
    public static long Find(ReadOnlySpan<byte> block, byte id)
    {
        var length = 0;
        var index = 0;
        for (var shift = 0; ; shift += 7)
        {
            var b = block[index++];
            length |= (b & 0x7F) << shift;
            if ((b & 0x80) == 0)
            {
                break;
            }
        }

        var properties = block.Slice(index, length);
        var position = 0;
        while (position < properties.Length)
        {
            var current = properties[position++];
            switch (current)
            {
                case 0x01 or 0x17 or 0x19 or 0x24 or 0x25 or 0x28 or 0x29 or 0x2A:
                    position += 1;
                    break;
                case 0x13 or 0x21 or 0x22 or 0x23:
                    if (current == id)
                    {
                        return (properties[position] << 8) | properties[position + 1];
                    }

                    position += 2;
                    break;
                case 0x02 or 0x11 or 0x18 or 0x27:
                    if (current == id)
                    {
                        return ((long)properties[position] << 24) | ((long)properties[position + 1] << 16) | ((long)properties[position + 2] << 8) | properties[position + 3];
                    }

                    position += 4;
                    break;
                case 0x0B:
                    while ((properties[position++] & 0x80) != 0)
                    {
                    }

                    break;
                case 0x26:
                    position += 2 + ((properties[position] << 8) | properties[position + 1]);
                    position += 2 + ((properties[position] << 8) | properties[position + 1]);
                    break;
                default:
                    // Strings and binary data: 0x03, 0x08, 0x09, 0x12, 0x15, 0x16, 0x1A, 0x1C, 0x1F.
                    position += 2 + ((properties[position] << 8) | properties[position + 1]);
                    break;
            }
        }

        return 0;
    }
}
