using System.Buffers.Binary;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;
using System.Text;

namespace Broker.Host.Tests.Plugins;

/// <summary>
/// The sample line plugin as the build placed it in this test's output (plugins/Broker.Samples.LinePlugin/), the probe
/// plugin (test-plugins/Broker.Tests.ProbePlugin/), and plugin folders made from them for tests: copies, copies that
/// claim a newer contract, broken folders.
/// </summary>
internal static class SamplePlugin
{
    public const string AssemblyName = "Broker.Samples.LinePlugin";

    public const string Id = "Line";

    /// <summary>The folder the build placed the sample in.</summary>
    public static string BuiltFolder { get; } = Path.Combine(AppContext.BaseDirectory, "plugins", AssemblyName);

    public const string ProbeAssemblyName = "Broker.Tests.ProbePlugin";

    public const string ProbeId = "Probe";

    /// <summary>The folder the build placed the probe plugin in (test-plugins/, not the host's default plugins/).</summary>
    public static string ProbeFolder { get; } = Path.Combine(AppContext.BaseDirectory, "test-plugins", ProbeAssemblyName);

    /// <summary>A fresh, empty plugins folder under the temp directory; the caller deletes it.</summary>
    public static string CreatePluginsFolder()
    {
        var path = Path.Combine(Path.GetTempPath(), "broker-plugins-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(path);
        return path;
    }

    /// <summary>
    /// Copies the sample into <paramref name="pluginsFolder"/>/<paramref name="folderName"/>/, its main assembly
    /// renamed after the folder as the catalog expects; returns the main assembly's path.
    /// </summary>
    public static string CopyTo(string pluginsFolder, string folderName = AssemblyName) => Copy(BuiltFolder, AssemblyName, pluginsFolder, folderName);

    /// <summary>
    /// Copies the probe plugin (tests/plugins/Broker.Tests.ProbePlugin, which carries its own Binder and reports which
    /// copies of its assemblies it runs with) into <paramref name="pluginsFolder"/>; returns its main assembly's path.
    /// </summary>
    public static string CopyProbeTo(string pluginsFolder) => Copy(ProbeFolder, ProbeAssemblyName, pluginsFolder, ProbeAssemblyName);

    private static string Copy(string source, string assemblyName, string pluginsFolder, string folderName)
    {
        var target = Path.Combine(pluginsFolder, folderName);
        Directory.CreateDirectory(target);
        foreach (var file in Directory.GetFiles(source))
        {
            var name = Path.GetFileName(file).Replace(assemblyName, folderName, StringComparison.Ordinal);
            File.Copy(file, Path.Combine(target, name), overwrite: true);
        }

        return Path.Combine(target, folderName + ".dll");
    }

    /// <summary>
    /// Rewrites the version of the Broker.Abstractions reference in an assembly's metadata, which is what compiling
    /// it against that contract version would have produced.
    /// </summary>
    public static void PatchReferencedContract(string assemblyPath, ushort major, ushort minor)
    {
        var bytes = File.ReadAllBytes(assemblyPath);
        int offset;
        using (var pe = new PEReader(new MemoryStream(bytes)))
        {
            var metadata = pe.GetMetadataReader();
            var handle = metadata.AssemblyReferences.Single(h => metadata.GetString(metadata.GetAssemblyReference(h).Name) == "Broker.Abstractions");
            var row = MetadataTokens.GetRowNumber(handle);

            // An AssemblyRef row starts with MajorVersion and MinorVersion (ECMA-335 II.22.5).
            offset = pe.PEHeaders.MetadataStartOffset
                + metadata.GetTableMetadataOffset(TableIndex.AssemblyRef)
                + ((row - 1) * metadata.GetTableRowSize(TableIndex.AssemblyRef));
        }

        BinaryPrimitives.WriteUInt16LittleEndian(bytes.AsSpan(offset), major);
        BinaryPrimitives.WriteUInt16LittleEndian(bytes.AsSpan(offset + 2), minor);
        File.WriteAllBytes(assemblyPath, bytes);
    }

    /// <summary>
    /// Rewrites the sample's <c>MinimumContractVersion = "1.1"</c> attribute argument to <c>"&lt;major&gt;.1"</c>: a
    /// plugin whose manifest asks for a newer contract than the one it references.
    /// </summary>
    public static void PatchManifestMinimumContract(string assemblyPath, char major)
    {
        var bytes = File.ReadAllBytes(assemblyPath);

        // A named string argument is serialised as: name length, name, value length, value (ECMA-335 II.23.3).
        var name = "MinimumContractVersion"u8;
        byte[] pattern = [(byte)name.Length, .. name, 3, (byte)'1', (byte)'.', (byte)'1'];
        var index = bytes.AsSpan().IndexOf(pattern);
        if (index < 0)
        {
            throw new InvalidOperationException("The sample's MinimumContractVersion = \"1.1\" argument was not found.");
        }

        bytes[index + 1 + name.Length + 1] = (byte)major;
        File.WriteAllBytes(assemblyPath, bytes);
    }

    /// <summary>A plugin folder whose main "assembly" is not a .NET assembly.</summary>
    public static void CreateGarbage(string pluginsFolder, string folderName)
    {
        var target = Path.Combine(pluginsFolder, folderName);
        Directory.CreateDirectory(target);
        File.WriteAllBytes(Path.Combine(target, folderName + ".dll"), Encoding.ASCII.GetBytes("this is not a portable executable"));
    }

    /// <summary>A plugin folder holding a real assembly (copied from this test's output) that is not a plugin.</summary>
    public static void CreateFromAssembly(string pluginsFolder, string folderName, string assemblyFile)
    {
        var target = Path.Combine(pluginsFolder, folderName);
        Directory.CreateDirectory(target);
        File.Copy(Path.Combine(AppContext.BaseDirectory, assemblyFile), Path.Combine(target, folderName + ".dll"));
    }

    public static void Delete(string folder)
    {
        try
        {
            Directory.Delete(folder, recursive: true);
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }
    }
}
