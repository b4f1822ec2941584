using System.Buffers.Binary;
using System.Globalization;
using Microsoft.Win32.SafeHandles;
using System.Text;

namespace Broker.Host.Plugins;

/// <summary>
/// A plugin's metadata written beside its main assembly by the build (<c>&lt;Name&gt;.plugin-manifest</c>,
/// build/Broker.PluginPlacement.targets): what <see cref="PluginMetadata.Read"/> would read, and the length and a hash
/// of the metadata it was read from (<see cref="FileKey"/>). Discovery uses it when both still match, instead of reading the assembly's
/// metadata, whose first use at every start loads System.Reflection.Metadata and a few hundred of its types
/// (docs/benchmarks.md, "start9"). It is only a fast path: a missing, unreadable, malformed or stale manifest (the
/// assembly's metadata changed) leaves discovery to read the metadata as before, so a plugin
/// dropped into <c>plugins/</c> without one loads as it always did.
/// </summary>
/// <remarks>
/// Text, one item a line, so that reading it touches no parser the start does not already use:
/// <code>
/// broker-plugin-manifest 1
/// file &lt;metadata length&gt; &lt;metadata hash, hexadecimal&gt;
/// contract &lt;major.minor&gt;              (absent: no reference to the contract)
/// attribute &lt;assembly name&gt; &lt;version&gt; (absent: no BrokerPluginAttribute; the lines below only follow it)
/// startup &lt;serialized type name&gt;       (each of startup, id, version, minimum-contract: absent when not written)
/// list aliases|keys|activation &lt;count&gt;  (absent when not written), then one line per item
/// </code>
/// A value runs from after the first space to the end of the line; a value with a line break is never written (the
/// build writes no manifest then).
/// </remarks>
internal static class PluginManifestFile
{
    /// <summary>The first line of every manifest; another version is ignored.</summary>
    public const string Header = "broker-plugin-manifest 1";

    /// <summary>The manifest's path for a plugin's main assembly.</summary>
    /// <param name="assemblyPath">The assembly.</param>
    /// <returns><c>&lt;folder&gt;/&lt;Name&gt;.plugin-manifest</c>.</returns>
    public static string PathFor(string assemblyPath) => Path.ChangeExtension(assemblyPath, ".plugin-manifest");

    /// <summary>Reads the manifest of <paramref name="assemblyPath"/> when it describes the file as it is now.</summary>
    /// <param name="assemblyPath">The plugin's main assembly, which exists.</param>
    /// <returns>The metadata, or <see langword="null"/> when discovery must read the assembly.</returns>
    public static PluginMetadata? TryRead(string assemblyPath)
    {
        var path = PathFor(assemblyPath);
        string[] lines;
        try
        {
            if (!File.Exists(path))
            {
                return null;
            }

            lines = File.ReadAllLines(path);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return null;
        }

        return FileKey(assemblyPath) is { } key ? Parse(lines, key) : null;
    }

    /// <summary>
    /// What identifies the part of an assembly file that <see cref="PluginMetadata.Read"/> reads: the length and a
    /// 64-bit hash of its metadata (ECMA-335 II.24), found through the PE headers. The manifest is a function of those
    /// bytes alone, so any change to them (a rebuild, another version, a patched reference) makes it stale, and a copy
    /// of the file keeps it valid.
    /// </summary>
    /// <param name="assemblyPath">The assembly.</param>
    /// <returns><c>&lt;length&gt; &lt;hash&gt;</c>, or <see langword="null"/> when the file is no .NET PE file or cannot be read.</returns>
    internal static string? FileKey(string assemblyPath)
    {
        try
        {
            using var file = File.OpenHandle(assemblyPath);
            var buffer = new byte[16 * 1024];
            var headerLength = RandomAccess.Read(file, buffer.AsSpan(0, 4096), 0);
            if (MetadataLocation(buffer.AsSpan(0, headerLength), file) is not var (offset, length))
            {
                return null;
            }

            var hash = 14695981039346656037UL;
            for (var done = 0L; done < length;)
            {
                var chunk = (int)Math.Min(buffer.Length, length - done);
                var read = RandomAccess.Read(file, buffer.AsSpan(0, chunk), offset + done);
                if (read != chunk)
                {
                    return null;
                }

                hash = Hash(hash, buffer.AsSpan(0, read));
                done += read;
            }

            return Number(length) + " " + hash.ToString("x16", CultureInfo.InvariantCulture);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    // The file offset and length of the metadata: PE header (II.25.2), its CLI header data directory (index 14), the
    // section holding each RVA, the CLI header's metadata directory (II.25.3.3). Null when anything is out of range.
    private static (long Offset, int Length)? MetadataLocation(ReadOnlySpan<byte> header, SafeFileHandle file)
    {
        if (header.Length < 0x40)
        {
            return null;
        }

        var pe = BinaryPrimitives.ReadInt32LittleEndian(header[0x3C..]);
        if (pe < 0x40 || pe > header.Length - 24 || BinaryPrimitives.ReadUInt32LittleEndian(header[pe..]) != 0x4550)
        {
            return null;
        }

        var sections = BinaryPrimitives.ReadUInt16LittleEndian(header[(pe + 6)..]);
        var optionalLength = BinaryPrimitives.ReadUInt16LittleEndian(header[(pe + 20)..]);
        var optional = pe + 24;
        var directories = BinaryPrimitives.ReadUInt16LittleEndian(header[optional..]) switch
        {
            0x10b => optional + 96,
            0x20b => optional + 112,
            _ => -1,
        };
        var table = optional + optionalLength;
        if (directories < 0 || directories + (15 * 8) > table || table + (sections * 40) > header.Length)
        {
            return null;
        }

        var section = header.Slice(table, sections * 40);
        if (FileOffset(section, BinaryPrimitives.ReadUInt32LittleEndian(header[(directories + (14 * 8))..])) is not { } cli)
        {
            return null;
        }

        Span<byte> cor = stackalloc byte[16];
        if (RandomAccess.Read(file, cor, cli) != cor.Length
            || FileOffset(section, BinaryPrimitives.ReadUInt32LittleEndian(cor[8..])) is not { } metadata)
        {
            return null;
        }

        var length = BinaryPrimitives.ReadInt32LittleEndian(cor[12..]);
        return length > 0 ? (metadata, length) : null;
    }

    private static long? FileOffset(ReadOnlySpan<byte> sections, uint rva)
    {
        for (var i = 0; i + 40 <= sections.Length; i += 40)
        {
            var start = BinaryPrimitives.ReadUInt32LittleEndian(sections[(i + 12)..]);
            var size = Math.Max(BinaryPrimitives.ReadUInt32LittleEndian(sections[(i + 8)..]), BinaryPrimitives.ReadUInt32LittleEndian(sections[(i + 16)..]));
            if (rva != 0 && rva >= start && rva - start < size)
            {
                return BinaryPrimitives.ReadUInt32LittleEndian(sections[(i + 20)..]) + (long)(rva - start);
            }
        }

        return null;
    }

    // FNV-1a over 64-bit words, then the tail bytes: stable across processes and runtimes (HashCode is seeded per
    // process), and a few tens of microseconds for a plugin's metadata.
    private static ulong Hash(ulong hash, ReadOnlySpan<byte> bytes)
    {
        const ulong prime = 1099511628211UL;
        var i = 0;
        for (; i + 8 <= bytes.Length; i += 8)
        {
            hash = (hash ^ BinaryPrimitives.ReadUInt64LittleEndian(bytes[i..])) * prime;
        }

        for (; i < bytes.Length; i++)
        {
            hash = (hash ^ bytes[i]) * prime;
        }

        return hash;
    }

    /// <summary>Parses a manifest's lines for the assembly file as it is now.</summary>
    /// <param name="lines">The manifest's lines.</param>
    /// <param name="fileKey">The assembly's <see cref="FileKey"/> now.</param>
    /// <returns>The metadata, or <see langword="null"/> when the manifest is malformed or describes another file.</returns>
    internal static PluginMetadata? Parse(string[] lines, string fileKey)
    {
        if (lines.Length < 2 || lines[0] != Header || lines[1] != "file " + fileKey)
        {
            return null;
        }

        Version? contract = null;
        PluginDeclaration? declaration = null;
        var i = 2;
        while (i < lines.Length)
        {
            var line = lines[i++];
            var space = line.IndexOf(' ', StringComparison.Ordinal);
            if (space <= 0)
            {
                return null;
            }

            var value = line[(space + 1)..];
            switch (line[..space])
            {
                case "contract" when contract is null && declaration is null:
                    if (!Version.TryParse(value, out contract))
                    {
                        return null;
                    }

                    break;
                case "attribute" when declaration is null:
                    var split = value.LastIndexOf(' ');
                    if (split <= 0 || !Version.TryParse(value[(split + 1)..], out var assemblyVersion))
                    {
                        return null;
                    }

                    declaration = new PluginDeclaration(value[..split], assemblyVersion, null);
                    break;
                case "startup" when declaration is { StartupType: null }:
                    declaration = declaration with { StartupType = value };
                    break;
                case "id" when declaration is { Id: null }:
                    declaration = declaration with { Id = value };
                    break;
                case "version" when declaration is { Version: null }:
                    declaration = declaration with { Version = value };
                    break;
                case "minimum-contract" when declaration is { MinimumContractVersion: null }:
                    declaration = declaration with { MinimumContractVersion = value };
                    break;
                case "list" when declaration is not null:
                    if (!TryReadList(lines, ref i, value, ref declaration))
                    {
                        return null;
                    }

                    break;
                default:
                    return null;
            }
        }

        return new PluginMetadata(contract, declaration);
    }

    /// <summary>The manifest of an assembly's metadata, as the build writes it (the tests compare the two).</summary>
    /// <param name="metadata">What the assembly declares.</param>
    /// <param name="fileKey">The assembly's <see cref="FileKey"/>.</param>
    /// <returns>The manifest's text, or <see langword="null"/> when a value holds a line break.</returns>
    internal static string? Format(PluginMetadata metadata, string fileKey)
    {
        var text = new StringBuilder();
        text.Append(Header).Append('\n').Append("file ").Append(fileKey).Append('\n');
        if (metadata.ReferencedContract is { } contract)
        {
            text.Append("contract ").Append(contract.Major).Append('.').Append(contract.Minor).Append('\n');
        }

        if (metadata.Attribute is { } a)
        {
            text.Append("attribute ").Append(a.AssemblyName).Append(' ').Append(a.AssemblyVersion).Append('\n');
            Value(text, "startup", a.StartupType);
            Value(text, "id", a.Id);
            Value(text, "version", a.Version);
            Value(text, "minimum-contract", a.MinimumContractVersion);
            List(text, "aliases", a.ConfigurationAliases);
            List(text, "keys", a.ConfigurationKeys);
            List(text, "activation", a.ActivationKeys);
        }

        var result = text.ToString();
        return !result.Contains('\r', StringComparison.Ordinal) && result.Count(c => c == '\n') == LineCount(metadata) ? result : null;
    }

    private static bool TryReadList(string[] lines, ref int i, string value, ref PluginDeclaration declaration)
    {
        var space = value.IndexOf(' ', StringComparison.Ordinal);
        if (space <= 0 || !int.TryParse(value.AsSpan(space + 1), NumberStyles.None, CultureInfo.InvariantCulture, out var count)
            || count > lines.Length - i)
        {
            return false;
        }

        var items = lines[i..(i + count)];
        i += count;
        switch (value[..space])
        {
            case "aliases" when declaration.ConfigurationAliases is null:
                declaration = declaration with { ConfigurationAliases = items };
                return true;
            case "keys" when declaration.ConfigurationKeys is null:
                declaration = declaration with { ConfigurationKeys = items };
                return true;
            case "activation" when declaration.ActivationKeys is null:
                declaration = declaration with { ActivationKeys = items };
                return true;
            default:
                return false;
        }
    }

    private static void Value(StringBuilder text, string name, string? value)
    {
        if (value is not null)
        {
            text.Append(name).Append(' ').Append(value).Append('\n');
        }
    }

    private static void List(StringBuilder text, string name, IReadOnlyList<string>? items)
    {
        if (items is null)
        {
            return;
        }

        text.Append("list ").Append(name).Append(' ').Append(items.Count).Append('\n');
        foreach (var item in items)
        {
            text.Append(item).Append('\n');
        }
    }

    // The lines a manifest of this metadata has when no value holds a line break.
    private static int LineCount(PluginMetadata metadata)
    {
        var lines = 2 + (metadata.ReferencedContract is null ? 0 : 1);
        if (metadata.Attribute is { } a)
        {
            lines += 1 + (a.StartupType is null ? 0 : 1) + (a.Id is null ? 0 : 1) + (a.Version is null ? 0 : 1)
                + (a.MinimumContractVersion is null ? 0 : 1) + Items(a.ConfigurationAliases) + Items(a.ConfigurationKeys)
                + Items(a.ActivationKeys);
        }

        return lines;
    }

    private static int Items(IReadOnlyList<string>? items) => items is null ? 0 : 1 + items.Count;

    private static string Number(long value) => value.ToString(CultureInfo.InvariantCulture);
}
